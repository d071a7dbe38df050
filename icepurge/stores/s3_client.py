"""A boto3 S3 client built from PyIceberg FileIO properties (the request's, never logged)."""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config

from icepurge.stores.shared_pools import pooled_connections

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

# Enough for every store and credential set a worker talks to at once; a rotated credential
# pushes the oldest client out.
_SHARED_CLIENTS = 32
_BUILDING = threading.Lock()
# PyIceberg accepts both spellings; the s3.* one wins, as in PyIceberg.
_KEYS = {
    "endpoint_url": ("s3.endpoint",),
    "aws_access_key_id": ("s3.access-key-id", "client.access-key-id"),
    "aws_secret_access_key": ("s3.secret-access-key", "client.secret-access-key"),
    "aws_session_token": ("s3.session-token", "client.session-token"),
    "region_name": ("s3.region", "client.region"),
}


def first_property(properties: dict[str, str], argument: str) -> str | None:
    """The property that gives boto3's `argument` (endpoint_url, aws_access_key_id, …)."""
    return next((properties[name] for name in _KEYS[argument] if properties.get(name)), None)


def virtual_addressing(properties: dict[str, str]) -> bool:
    """Whether the bucket goes in the host name rather than the path."""
    return properties.get("s3.force-virtual-addressing", "false").lower() == "true"


def credentials_given(properties: dict[str, str]) -> bool:
    """Whether the properties carry an access key and its secret, rather than leaving them to the
    credential chain."""
    key = first_property(properties, "aws_access_key_id")
    return bool(key and first_property(properties, "aws_secret_access_key"))


def s3_client(properties: dict[str, str], max_connections: int, max_attempts: int = 8) -> S3Client:
    """`max_attempts` counts the first attempt too: 1 means boto3 never retries.

    Clients are shared by everything in the process that asks with the same properties: building
    one loads botocore's service model (a third of a small table purge's worker CPU, measured
    with py-spy in bench.namespace_purge), and boto3 clients are thread-safe. Clients for other
    properties come from the same session, which loaded the model once."""
    # One builder at a time: concurrent first requests would each build their own.
    with _BUILDING:
        return _shared_client(tuple(sorted(properties.items())), max_connections, max_attempts)


@functools.cache
def _session() -> boto3.session.Session:
    # Sessions are not thread-safe: clients are only built under _BUILDING.
    return boto3.session.Session()


def load_s3_model() -> None:
    """Loads botocore's S3 model into the process's session ahead of the first client (a Spark
    Python worker's first task builds two: bench.s3_client_build)."""
    with _BUILDING:
        _session().client("s3", region_name="us-east-1")


@functools.lru_cache(maxsize=_SHARED_CLIENTS)
def _shared_client(items: tuple[tuple[str, str], ...], max_connections: int, max_attempts: int) -> S3Client:
    properties = dict(items)
    arguments = {name: first_property(properties, name) for name in _KEYS}
    virtual = virtual_addressing(properties)
    config = Config(
        # botocore's own "max_attempts" counts retries only.
        retries={"mode": "standard", "total_max_attempts": max_attempts},
        max_pool_connections=pooled_connections(max_connections),
        connect_timeout=10,
        read_timeout=60,
        s3={"addressing_style": "virtual" if virtual else "path"},
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    return _session().client(
        "s3",
        config=config,
        region_name=arguments["region_name"] or "us-east-1",
        endpoint_url=arguments["endpoint_url"],
        aws_access_key_id=arguments["aws_access_key_id"],
        aws_secret_access_key=arguments["aws_secret_access_key"],
        aws_session_token=arguments["aws_session_token"],
    )
