"""icepurge on a secured Temporal: the dev server behind nginx terminating TLS (a CA the test
makes), verifying client certificates (mutual TLS), or taking only calls that carry an API key
as the SDK sends it. The worker, the clients and `icepurge admin setup` connect the way Temporal's
own tools are configured (TEMPORAL_* variables, read through temporalio.envconfig); a purge runs
end to end through each; each misconfiguration is answered with one line naming the fix, by
connect, the worker's start, the API's /readyz and the doctor."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.client import Client

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server import temporal_connection
from icepurge.api.server.admin_setup import ensure_search_attributes
from icepurge.api.server.app import create_app
from icepurge.api.server.doctor_checks import server_checks
from icepurge.api.server.settings import ApiSettings
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.connection.connect import connect
from icepurge.connection.errors import TemporalUnreachableError
from icepurge.connection.settings import TemporalSettings
from icepurge.contract.states import PurgeState
from icepurge.devstack.grpc_tls_proxy import ProxyChecks, grpc_tls_proxy, nginx_missing
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.tls_certificates import TlsFiles, make_tls_files
from icepurge.worker.run import activity_pool, build_worker
from icepurge.worker.settings import WorkerSettings
from tests.api_server import token_file
from tests.cli_runner import run_cli
from tests.purge_helpers import request_for
from tests.store import S3Store
from tests.tables import simple_table

pytestmark = pytest.mark.skipif(nginx_missing() is not None, reason=str(nginx_missing()))
API_KEY = "icepurge-test-api-key"


@dataclass(frozen=True)
class Proxies:
    files: TlsFiles
    tls: str
    mutual: str
    api_key: str


@pytest.fixture(scope="module")
def proxies(stack: EmbeddedStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxies]:
    directory = tmp_path_factory.mktemp("secured-temporal")
    files = make_tls_files(directory / "certs")
    upstream = stack.temporal_address
    with ExitStack() as running:
        tls = running.enter_context(grpc_tls_proxy(directory / "tls", upstream, files))
        mutual = running.enter_context(
            grpc_tls_proxy(directory / "mtls", upstream, files, ProxyChecks(mutual=True))
        )
        keyed = running.enter_context(
            grpc_tls_proxy(directory / "api-key", upstream, files, ProxyChecks(api_key=API_KEY))
        )
        yield Proxies(files, tls, mutual, keyed)


def _environments(proxies: Proxies) -> dict[str, tuple[str, dict[str, str]]]:
    """Each way in: the proxy's address and the TEMPORAL_* variables a user sets for it."""
    files = proxies.files
    ca = {"TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(files.ca)}
    client = {
        "TEMPORAL_TLS_CLIENT_CERT_PATH": str(files.client.cert),
        "TEMPORAL_TLS_CLIENT_KEY_PATH": str(files.client.key),
    }
    return {
        "tls": (proxies.tls, ca),
        "mtls": (proxies.mutual, {**ca, **client}),
        "api key": (proxies.api_key, {**ca, "TEMPORAL_API_KEY": API_KEY}),
    }


@pytest.fixture
def temporal_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Only the variables a test sets: none of this process's TEMPORAL_* leak in."""
    for name in [name for name in os.environ if name.startswith("TEMPORAL_")]:
        monkeypatch.delenv(name)
    yield


@asynccontextmanager
async def _worker_through(address: str, worker_settings: WorkerSettings) -> AsyncIterator[PurgeClient]:
    settings = WorkerSettings.model_validate(
        {
            **worker_settings.model_dump(),
            "state_io_properties": worker_settings.state_io_properties,
            "temporal_address": address,
            "task_queue": f"icepurge-secured-{uuid4().hex[:6]}",
        }
    )
    client = await connect(settings)
    with activity_pool(settings) as pool:
        async with build_worker(client, settings, pool):
            yield PurgeClient(client, settings.task_queue)


@pytest.mark.usefixtures("temporal_env")
@pytest.mark.parametrize("way", ["tls", "mtls", "api key"])
async def test_a_purge_runs_end_to_end_through_a_secured_frontend(
    way: str,
    proxies: Proxies,
    monkeypatch: pytest.MonkeyPatch,
    worker_settings: WorkerSettings,
    catalog: SqlCatalog,
    s3: S3Store,
) -> None:
    address, env = _environments(proxies)[way]
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    table = simple_table(catalog, ("secured",), f"through_{way.replace(' ', '_')}")
    location = table.location()
    assert s3.list(location)
    async with _worker_through(address, worker_settings) as purges:
        # `icepurge admin setup` through the same frontend: every attribute there already.
        admin = await connect(TemporalSettings(temporal_address=address), warn_plaintext=False)
        assert await ensure_search_attributes(admin, "default") == []
        report = await purges.wait(await purges.start(request_for(table, s3.properties)))
    assert report.status.state is PurgeState.SUCCEEDED
    assert s3.list(location) == set()


def _misconfigurations(files: TlsFiles) -> dict[str, tuple[str, dict[str, str], str]]:
    """Each way a client gets it wrong: the proxy, what it sets, the line it must read."""
    ca = {"TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(files.ca)}
    return {
        "wrong CA": (
            "tls",
            {"TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(files.other_ca)},
            "(TLS): its certificate is not signed by the CA this client trusts; set "
            "TEMPORAL_TLS_SERVER_CA_CERT_PATH to the CA that signed it",
        ),
        "plaintext to a TLS frontend": (
            "tls",
            {},
            "(plaintext): it answered a plaintext connection as a TLS endpoint does; set TEMPORAL_TLS=true",
        ),
        "no client certificate": (
            "mtls",
            ca,
            "(TLS): it requires a client certificate (mutual TLS); set TEMPORAL_TLS_CLIENT_CERT_PATH and "
            "TEMPORAL_TLS_CLIENT_KEY_PATH",
        ),
        "expired client certificate": (
            "mtls",
            {
                **ca,
                "TEMPORAL_TLS_CLIENT_CERT_PATH": str(files.expired_client.cert),
                "TEMPORAL_TLS_CLIENT_KEY_PATH": str(files.expired_client.key),
            },
            "the client certificate TEMPORAL_TLS_CLIENT_CERT_PATH names expired on",
        ),
        "refused API key": (
            "api key",
            {**ca, "TEMPORAL_API_KEY": "not-the-key"},
            "(TLS and an API key): it refused the API key; set TEMPORAL_API_KEY to a current key",
        ),
        "no API key": ("api key", ca, "(TLS): it requires credentials; set TEMPORAL_API_KEY"),
        "a CA file that isn't there": (
            "tls",
            {"TEMPORAL_TLS_SERVER_CA_CERT_PATH": "/nonexistent/ca.pem"},
            "Temporal's client configuration can't be read (No such file or directory: /nonexistent/ca.pem)",
        ),
    }


@pytest.mark.usefixtures("temporal_env")
async def test_each_misconfiguration_is_one_line_naming_the_fix_everywhere(
    proxies: Proxies,
    monkeypatch: pytest.MonkeyPatch,
    stack: EmbeddedStack,
    tmp_path: Path,
) -> None:
    addresses = {way: address for way, (address, _) in _environments(proxies).items()}
    attempts: list[TemporalSettings] = []

    async def counted(settings: TemporalSettings, *args: Any, **kwargs: Any) -> Client:
        attempts.append(settings)
        return await connect(settings, *args, **kwargs)

    for case, (way, env, line) in _misconfigurations(proxies.files).items():
        with monkeypatch.context() as scoped:
            for name, value in env.items():
                scoped.setenv(name, value)
            settings = TemporalSettings(temporal_address=addresses[way])
            with pytest.raises(TemporalUnreachableError) as refused:
                await connect(settings, warn_plaintext=False)
            message = str(refused.value)
            assert line in message, case
            assert "\n" not in message and API_KEY not in message and "not-the-key" not in message
            # The doctor's check says the same line.
            api_settings = _api_settings(stack, addresses[way], tmp_path)
            (temporal, *_) = await server_checks(api_settings, CatalogRegistry({}))
            assert (temporal.check, temporal.outcome, temporal.detail) == ("temporal", "FAIL", message), case
            # The API starts, and /readyz answers 503 with it; asked again at once, it answers from
            # the refusal it kept instead of connecting again.
            attempts.clear()
            scoped.setattr(temporal_connection, "connect", counted)
            app = create_app(api_settings)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://api") as api:
                answers = [await api.get("/readyz"), await api.get("/readyz")]
            assert [answer.status_code for answer in answers] == [503, 503], case
            assert [answer.json()["detail"] for answer in answers] == [message, message], case
            assert len(attempts) == 1, case
        # The worker's start: the line on stderr, exit code 2, no traceback.
        code, _, stderr = await run_cli(
            ("worker",),
            {
                **env,
                "ICEPURGE_TEMPORAL_ADDRESS": addresses[way],
                "ICEPURGE_STATE_LOCATION": "s3://icepurge-state/secured",
                "ICEPURGE_CODEC_KEYS": json.dumps(stack.codec_keys),
            },
        )
        assert code == 2, (case, stderr)
        assert line in stderr and "Traceback" not in stderr, (case, stderr)


def _api_settings(stack: EmbeddedStack, address: str, directory: Path) -> ApiSettings:
    return ApiSettings(
        temporal_address=address,
        codec_keys=stack.codec_keys,
        state_location="s3://icepurge-state/secured",
        state_io_properties=stack.s3_properties,
        api_auth_file=token_file(directory),
    )
