"""The deployment files as users run them, checked as far as these machines allow. The Compose
files loaded by compose-go, the loader `docker compose config` runs (built by `make
compose-config`: there is no Docker engine or Compose plugin here), and checked against the
Compose specification's schema (check-jsonschema's vendored copy); the Kubernetes manifests
against Kubernetes' own schemas, strictly (kubernetes-validate); and what each must say: Temporal
on PostgreSQL, several workers given longer to stop than their shutdown grace, the API ready on
/readyz, Prometheus told where the metrics are, secrets only from secrets, and no setting named
that icepurge doesn't read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from icepurge.api.server.settings import ApiSettings
from icepurge.worker.settings import WorkerSettings
from tests.paths import ROOT

COMPOSE = ROOT / "deploy" / "compose" / "docker-compose.yml"
MANIFESTS = sorted((ROOT / "deploy" / "kubernetes").glob("*.yaml"))
KUBERNETES = "1.37"
COMPOSE_LOADER = Path(
    os.environ.get("ICEPURGE_COMPOSE_CONFIG") or Path.home() / ".cache" / "icepurge" / "bin" / "composeconfig"
)


def _compose_errors(path: Path) -> str:
    """check-jsonschema's verdict on a Compose file ('' when valid)."""
    checked = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return "" if checked.returncode == 0 else checked.stdout + checked.stderr


def _documents() -> list[dict[str, Any]]:
    return [document for path in MANIFESTS for document in yaml.safe_load_all(path.read_text()) if document]


def _kind(kind: str, name: str) -> dict[str, Any]:
    return next(doc for doc in _documents() if doc["kind"] == kind and doc["metadata"]["name"] == name)


def _settings() -> set[str]:
    fields = {*WorkerSettings.model_fields, *ApiSettings.model_fields}
    return {f"ICEPURGE_{name.upper()}" for name in fields}


@pytest.mark.parametrize("path", [COMPOSE, ROOT / "docker-compose.yml"], ids=["production", "dev"])
def test_the_compose_files_follow_the_compose_specification(path: Path) -> None:
    assert _compose_errors(path) == ""


def _load_compose(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COMPOSE_LOADER), str(path)], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.skipif(not COMPOSE_LOADER.exists(), reason=f"`make compose-config` builds {COMPOSE_LOADER} (Go)")
def test_compose_loads_the_production_file_as_docker_compose_config_does(tmp_path: Path) -> None:
    """Beside the files it names (empty here): Compose refuses a missing env file or secret."""
    folder = tmp_path / "deploy" / "compose"
    (folder / "secrets").mkdir(parents=True)
    copy = folder / COMPOSE.name
    copy.write_text(COMPOSE.read_text())
    for placeholder in ("icepurge.env", "tokens.json", "secrets/postgres-password"):
        (folder / placeholder).touch()
    loaded = _load_compose(copy)
    assert loaded.returncode == 0, loaded.stderr
    services = yaml.safe_load(loaded.stdout)["services"]
    assert services["worker"]["deploy"]["replicas"] == 3
    assert services["worker"]["stop_grace_period"] == "1m30s"
    assert services["worker"]["build"]["context"] == str(tmp_path)
    assert services["temporal"]["environment"]["DB"] == "postgres12"
    assert services["api"]["depends_on"]["setup"]["condition"] == "service_completed_successfully"
    (folder / "icepurge.env").unlink()
    refused = _load_compose(copy)
    assert refused.returncode != 0 and "icepurge.env" in refused.stderr


def test_a_compose_file_off_the_specification_is_refused(tmp_path: Path) -> None:
    broken = yaml.safe_load(COMPOSE.read_text())
    broken["services"]["worker"]["stop_grace"] = broken["services"]["worker"].pop("stop_grace_period")
    path = tmp_path / "docker-compose.yml"
    path.write_text(yaml.safe_dump(broken))
    assert "stop_grace" in _compose_errors(path)


def test_the_production_compose_runs_temporal_on_postgresql_and_several_workers() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    temporal = services["temporal"]
    assert temporal["image"].startswith("temporalio/auto-setup:")
    assert temporal["environment"]["DB"] == "postgres12"
    assert temporal["environment"]["POSTGRES_SEEDS"] == "postgresql"
    assert services["postgresql"]["image"].startswith("postgres:")
    worker = services["worker"]
    assert worker["deploy"]["replicas"] >= 2
    grace = float(worker["environment"]["ICEPURGE_SHUTDOWN_GRACE_SECONDS"])
    assert int(worker["stop_grace_period"].removesuffix("s")) > grace
    assert "/readyz" in " ".join(services["api"]["healthcheck"]["test"])
    assert services["api"]["command"] == ["api"] and services["setup"]["command"] == ["admin", "setup"]
    for service in services.values():
        for name in service.get("environment", {}):
            assert not name.startswith("ICEPURGE_") or name in _settings(), name
            assert "PASSWORD" not in name or name.endswith("_FILE"), name


@pytest.mark.parametrize("path", MANIFESTS, ids=[path.name for path in MANIFESTS])
def test_the_manifests_validate_against_kubernetes_schemas(path: Path) -> None:
    for document in yaml.safe_load_all(path.read_text()):
        kubernetes_validate.validate(document, KUBERNETES, strict=True)


def test_a_manifest_off_the_schema_is_refused() -> None:
    worker = _kind("Deployment", "icepurge-worker")
    worker["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = "ninety"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(worker, KUBERNETES, strict=True)
    unknown = _kind("Deployment", "icepurge-api")
    unknown["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = []
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(unknown, KUBERNETES, strict=True)


def test_the_worker_outlasts_its_shutdown_grace_and_tells_prometheus_where_to_scrape() -> None:
    settings = _kind("ConfigMap", "icepurge-settings")["data"]
    pod = _kind("Deployment", "icepurge-worker")["spec"]["template"]
    assert pod["spec"]["terminationGracePeriodSeconds"] > float(settings["ICEPURGE_SHUTDOWN_GRACE_SECONDS"])
    annotations = pod["metadata"]["annotations"]
    port = settings["ICEPURGE_METRICS_ADDRESS"].rpartition(":")[2]
    assert (annotations["prometheus.io/scrape"], annotations["prometheus.io/port"]) == ("true", port)
    assert {item["containerPort"] for item in pod["spec"]["containers"][0]["ports"]} == {int(port)}
    assert _kind("Deployment", "icepurge-worker")["spec"]["replicas"] >= 2


def test_the_api_is_ready_on_readyz_and_every_secret_comes_from_a_secret() -> None:
    from icepurge.api.server.app import create_app

    routes = {getattr(route, "path", "") for route in create_app(ApiSettings(api_insecure_dev=True)).routes}
    container = _kind("Deployment", "icepurge-api")["spec"]["template"]["spec"]["containers"][0]
    assert {"/readyz", "/healthz"} <= routes
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    secret_names = set(_kind("Secret", "icepurge-secrets")["stringData"])
    for document in _documents():
        if document["kind"] != "Deployment":
            continue
        for each in document["spec"]["template"]["spec"]["containers"]:
            for variable in each.get("env", []):
                if variable["name"] in secret_names:
                    assert "value" not in variable, variable["name"]
                assert not variable["name"].startswith("ICEPURGE_") or variable["name"] in _settings()
    for name in _kind("ConfigMap", "icepurge-settings")["data"]:
        assert not name.startswith("ICEPURGE_") or name in _settings(), name
        assert name not in secret_names
