"""fake-gcs-server, a Google Cloud Storage emulator (built by `make engines` from the Go module
proxy, tools/fakegcs): the JSON API, its batch endpoint and the XML API on loopback, for the GCS
store's tests and benchmark. PyIceberg writes tables to it through PyArrow's GCS file system."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx
from pyiceberg.io import GCS_PROJECT_ID, GCS_SERVICE_HOST, GCS_TOKEN, GCS_TOKEN_EXPIRES_AT_MS

from icepurge.devstack.engines_cache import engine_dir
from icepurge.devstack.process import ServiceFailedError, ServiceProcess

# The emulator takes any bearer token; PyArrow's file system wants one (without it, it looks for
# Google's default credentials) with its expiry.
EMULATOR_TOKEN = "fake-gcs-server-takes-any-token"  # noqa: S105 - not a credential
_TOKEN_LIFETIME_MS = 24 * 3600 * 1000


@dataclass(frozen=True)
class FakeGcsEndpoint:
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def properties(self, url: str | None = None) -> dict[str, str]:
        """PyIceberg FileIO properties for the emulator (or a proxy in front of it at `url`)."""
        return {
            GCS_SERVICE_HOST: url or self.url,
            GCS_TOKEN: EMULATOR_TOKEN,
            GCS_TOKEN_EXPIRES_AT_MS: str(int(time.time() * 1000) + _TOKEN_LIFETIME_MS),
            GCS_PROJECT_ID: "icepurge",
        }

    def location(self, bucket: str, path: str) -> str:
        return f"gs://{bucket}/{path.strip('/')}"

    def names(self, bucket: str, prefix: str) -> set[str]:
        """Every object name under `prefix`, through the JSON API's own paging."""
        found: set[str] = set()
        token: str | None = None
        while True:
            query = {"prefix": prefix, "maxResults": "1000", **({"pageToken": token} if token else {})}
            answer = httpx.get(
                f"{self.url}/storage/v1/b/{quote(bucket, safe='')}/o", params=query, timeout=30
            )
            answer.raise_for_status()
            page = answer.json()
            found.update(item["name"] for item in page.get("items", []))
            token = page.get("nextPageToken")
            if not token:
                return found


def fake_gcs_server(state_dir: Path, port: int) -> ServiceProcess:
    command = [
        str(engine_dir("fake-gcs-server") / "fake-gcs-server"),
        "-scheme=http",
        "-host=127.0.0.1",
        f"-port={port}",
        "-backend=memory",
        # The XML API answers requests to this host (obstore's reads and heads), whatever
        # the port: a proxy in front of the emulator has its own.
        "-public-host=127.0.0.1",
        f"-external-url=http://127.0.0.1:{port}",
        "-log-level=error",
    ]
    return ServiceProcess("fake-gcs-server", command, state_dir / "logs" / "fake-gcs-server.log")


def create_buckets(endpoint: FakeGcsEndpoint, names: list[str], timeout: float = 60.0) -> None:
    """The emulator opens its port before it serves: retry until a bucket can be made."""
    deadline = time.monotonic() + timeout
    for name in names:
        while True:
            try:
                answer = httpx.post(f"{endpoint.url}/storage/v1/b", json={"name": name}, timeout=10)
                if answer.status_code in (200, 409):
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise ServiceFailedError(
                    f"fake-gcs-server at {endpoint.url} made no bucket {name} in {timeout:.0f} s"
                )
            time.sleep(0.2)
