# The two commands: `make run` (the embedded stack, a worker and a demo purge) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: install run test lint schemas bench clean

install: $(INSTALLED)

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(INSTALLED)

run: install
	$(PY) -m devstack.run

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .

test: install lint
	$(PY) -m pytest

schemas: install
	$(PY) -m api.schemas schemas

bench: install
	$(PY) -m bench.purge_throughput

clean:
	rm -rf .state .pytest_cache .mypy_cache .ruff_cache
