"""Whole S3 objects read, written and headed through obstore (Rust's object_store): a tenth of
boto3's CPU per GET or PUT (bench.s3_client_cpu), and those requests were most of a small table's
worker CPU. Errors come out as s3_objects' do: FileNotFoundError for a 404, PermissionError for a
401 or 403, and an OSError naming the store's code for anything else ("Could not connect …" when
no connection was made, as botocore says it).

Used only when the FileIO properties carry the credentials themselves (`takes_obstore`): boto3's
credential chain (environment, profiles, instance roles) stays boto3's. obstore is not fork-safe
(developmentseed/obstore#441: a forked child's runtime hangs), so a process forked after its
first obstore request uses boto3. So does a key obstore's paths can't name as S3 does: one with
an empty, "." or ".." segment ("a//b" is its own key on S3; obstore refuses it or drops the
empty segment). ICEPURGE_S3_CLIENT=boto3 sends every request through boto3, for a store that
answers obstore otherwise than boto3 (and as the benchmarks' baseline)."""

from __future__ import annotations

import functools
import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import obstore
from obstore.store import S3Store as ObstoreS3

from icepurge.stores.obstore_runtime import (
    client_options,
    forked_since_runtime,
    nameable,
    note_runtime_use,
    obstore_errors,
    retry_config,
)
from icepurge.stores.s3_client import credentials_given, first_property, virtual_addressing
from icepurge.stores.s3_objects import Boto3Objects
from icepurge.stores.store import ObjectHead

if TYPE_CHECKING:
    from obstore.store import S3Config, S3Credential

# Stores are per bucket: room for every bucket and credential set a worker talks to at once.
_SHARED_STORES = 64
S3_CLIENT_VARIABLE = "ICEPURGE_S3_CLIENT"
_CLIENTS = ("obstore", "boto3")
_CA_BUNDLE_VARIABLE = "AWS_CA_BUNDLE"


def takes_obstore(properties: dict[str, str]) -> bool:
    """Whether requests with these properties go through obstore rather than boto3. Not for
    virtual-host addressing at an endpoint of one's own (boto3 puts the bucket in the endpoint's
    host, obstore wants an endpoint that names the bucket already)."""
    own_virtual_endpoint = virtual_addressing(properties) and first_property(properties, "endpoint_url")
    return (
        obstore_chosen()
        and credentials_given(properties)
        and not own_virtual_endpoint
        and not forked_since_runtime()
    )


class S3ClientChoiceError(ValueError):
    """ICEPURGE_S3_CLIENT names no client icepurge has."""


def obstore_chosen() -> bool:
    """What ICEPURGE_S3_CLIENT says (the worker checks it as it starts)."""
    chosen = os.environ.get(S3_CLIENT_VARIABLE, _CLIENTS[0])
    if chosen not in _CLIENTS:
        raise S3ClientChoiceError(
            f"{S3_CLIENT_VARIABLE}={chosen!r}: set {_CLIENTS[0]} (the default) or {_CLIENTS[1]}"
        )
    return chosen == _CLIENTS[0]


class ObstoreObjects:
    """`attempts` counts the first attempt too; `connections` is what the caller sends at once;
    `boto3` takes the keys obstore can't name."""

    def __init__(
        self, properties: dict[str, str], connections: int, attempts: int, boto3: Boto3Objects
    ) -> None:
        self._items = tuple(sorted(properties.items()))
        self._connections = connections
        self._attempts = attempts
        self._boto3 = boto3

    def get(self, bucket: str, key: str) -> bytes:
        if not nameable(key):
            return self._boto3.get(bucket, key)
        with obstore_errors(f"s3://{bucket}/{key}"):
            return obstore.get(self._store(bucket), key).bytes().to_bytes()

    def put(self, bucket: str, key: str, body: bytes) -> None:
        if not nameable(key):
            self._boto3.put(bucket, key, body)
            return
        with obstore_errors(f"s3://{bucket}/{key}"):
            obstore.put(self._store(bucket), key, body)

    def head(self, bucket: str, key: str) -> ObjectHead | None:
        if not nameable(key):
            return self._boto3.head(bucket, key)
        try:
            with obstore_errors(f"s3://{bucket}/{key}"):
                meta = obstore.head(self._store(bucket), key)
        except FileNotFoundError:
            return None
        modified: datetime = meta["last_modified"]
        return ObjectHead(size=int(meta["size"]), modified=modified)

    def _store(self, bucket: str) -> ObstoreS3:
        note_runtime_use()
        return _shared_store(self._items, bucket, self._connections, self._attempts)


@functools.lru_cache(maxsize=_SHARED_STORES)
def _shared_store(
    items: tuple[tuple[str, str], ...], bucket: str, connections: int, attempts: int
) -> ObstoreS3:
    properties = dict(items)
    endpoint = first_property(properties, "endpoint_url")
    credential: S3Credential = {
        "access_key_id": first_property(properties, "aws_access_key_id") or "",
        "secret_access_key": first_property(properties, "aws_secret_access_key") or "",
        "token": first_property(properties, "aws_session_token"),
        "expires_at": None,
    }
    config: S3Config = {
        "region": first_property(properties, "region_name") or "us-east-1",
        "virtual_hosted_style_request": virtual_addressing(properties),
    }
    if endpoint:
        config["endpoint"] = endpoint
    client = client_options(endpoint, connections)
    bundle = os.environ.get(_CA_BUNDLE_VARIABLE)
    if bundle:
        # The CAs boto3 trusts besides the system's (a store behind a private CA).
        client["root_certificate"] = Path(bundle).read_bytes()
    return ObstoreS3(
        bucket,
        config=config,
        # The properties' credentials, never the environment's: as boto3 is given them.
        credential_provider=lambda: credential,
        client_options=client,
        retry_config=retry_config(attempts),
    )
