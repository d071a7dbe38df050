"""Azurite, Microsoft's Azure Storage emulator (the npm package `make install` puts under
icepurge/devstack/azurite when npm is present): Blob service on loopback, the stack's second real store.

Tables on it are written by PyIceberg's fsspec FileIO (adlfs) at abfs:// locations. Azurite has
no DFS endpoint, so the account's blob endpoint answers for both."""

from __future__ import annotations

import contextlib
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from azure.core.exceptions import AzureError, ResourceExistsError
from azure.storage.blob import BlobServiceClient

from icepurge.devstack.process import ServiceFailedError, ServiceProcess

AZURITE_BIN = Path(__file__).parent / "azurite" / "node_modules" / ".bin" / "azurite-blob"
# Azurite's well-known development account (published in its documentation; not a secret).
ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def azurite_unavailable() -> str | None:
    """Why Azurite can't run here, or None when it can."""
    if shutil.which("node") is None:
        return "Node.js is not installed: the Azurite tier needs `node` (and npm for `make install`)"
    if not AZURITE_BIN.exists():
        return f"Azurite is not installed at {AZURITE_BIN}: run `make install` with npm on the PATH"
    return None


@dataclass(frozen=True)
class AzuriteEndpoint:
    port: int

    @property
    def blob_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{ACCOUNT}"

    @property
    def connection_string(self) -> str:
        return (
            f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={ACCOUNT_KEY};"
            f"BlobEndpoint={self.blob_url};"
        )

    def properties(self) -> dict[str, str]:
        """PyIceberg FileIO properties: adlfs (and icepurge's batch deleter) take the
        connection string; the account name lets abfs URIs name the container only."""
        return {"adls.connection-string": self.connection_string, "adls.account-name": ACCOUNT}

    def location(self, container: str, path: str) -> str:
        return f"abfs://{container}@{ACCOUNT}.dfs.core.windows.net/{path.strip('/')}"

    def service(self) -> BlobServiceClient:
        return BlobServiceClient.from_connection_string(self.connection_string)


def azurite_server(state_dir: Path, port: int) -> ServiceProcess:
    data_dir = state_dir / "azurite"
    data_dir.mkdir(parents=True, exist_ok=True)
    command = [
        str(AZURITE_BIN),
        "--blobHost=127.0.0.1",
        f"--blobPort={port}",
        f"--location={data_dir}",
        "--skipApiVersionCheck",
        "--disableProductStyleUrl",
        "--silent",
    ]
    return ServiceProcess("azurite", command, state_dir / "logs" / "azurite.log")


def create_containers(endpoint: AzuriteEndpoint, names: list[str], timeout: float = 60.0) -> None:
    """Azurite opens its port before it serves: retry until a container can be made."""
    service = endpoint.service()
    deadline = time.monotonic() + timeout
    for name in names:
        while True:
            try:
                with contextlib.suppress(ResourceExistsError):
                    service.create_container(name)
                break
            except AzureError as error:
                if time.monotonic() > deadline:
                    raise ServiceFailedError(f"Azurite container {name} not usable: {error}") from error
                time.sleep(0.3)
