# The two commands: `make run` (the embedded stack, a worker and a demo purge) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: install run test lint schemas bench chaos clean

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

# The full chaos run: 50 worker kills, a Temporal server restart, store faults; its output is kept.
chaos: install
	mkdir -p chaos
	ICEPURGE_CHAOS_KILLS=50 ICEPURGE_CHAOS_RESTART_SERVER=1 ICEPURGE_CHAOS_SCALE=3 \
		ICEPURGE_CHAOS_DELETE_DELAY=0.6 ICEPURGE_CHAOS_READ_DELAY=0.05 \
		$(PY) -m pytest -m chaos -s tests/test_chaos.py > chaos/full-run.txt 2>&1; \
		status=$$?; cat chaos/full-run.txt; exit $$status

schemas: install
	$(PY) -m api.schemas schemas

bench: install
	$(PY) -m bench.purge_throughput

clean:
	rm -rf .state .pytest_cache .mypy_cache .ruff_cache
