"""Whole S3 objects through the process's shared boto3 client: one request each (PyArrow's file
system sends a HEAD before every read), errors as the FileIO's would be. FileNotFoundError for a
404, PermissionError for a 403, and an OSError naming the store's code for anything else."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

from botocore.exceptions import BotoCoreError, ClientError

from icepurge.stores.s3_client import s3_client

_MISSING_CODES = frozenset({"NoSuchKey", "NotFound", "NoSuchBucket", "404"})


def get_object(properties: dict[str, str], location: str, connections: int, max_attempts: int) -> bytes:
    bucket, key = _bucket_and_key(location)
    client = s3_client(properties, max_connections=connections, max_attempts=max_attempts)
    with as_os_errors(location):
        return client.get_object(Bucket=bucket, Key=key)["Body"].read()


def put_object(
    properties: dict[str, str], location: str, body: bytes, connections: int, max_attempts: int
) -> None:
    bucket, key = _bucket_and_key(location)
    client = s3_client(properties, max_connections=connections, max_attempts=max_attempts)
    with as_os_errors(location):
        client.put_object(Bucket=bucket, Key=key, Body=body)


def delete_object(properties: dict[str, str], location: str, connections: int, max_attempts: int) -> None:
    """Deleting an absent key succeeds, as S3 answers."""
    bucket, key = _bucket_and_key(location)
    client = s3_client(properties, max_connections=connections, max_attempts=max_attempts)
    with as_os_errors(location):
        client.delete_object(Bucket=bucket, Key=key)


def _bucket_and_key(location: str) -> tuple[str, str]:
    parts = urlsplit(location)
    return parts.netloc, parts.path.lstrip("/")


@contextmanager
def as_os_errors(location: str) -> Iterator[None]:
    try:
        yield
    except ClientError as error:
        details = error.response.get("Error", {})
        code = str(details.get("Code", ""))
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        text = f"{code or status}: {details.get('Message', '')} ({location})"
        if status == 404 or code in _MISSING_CODES:
            raise FileNotFoundError(text) from None
        if status == 403:
            raise PermissionError(text) from None
        raise OSError(text) from None
    except BotoCoreError as error:
        # Its message carries what config_faults looks for ("Could not connect", "Unable to
        # locate credentials").
        raise OSError(f"{type(error).__name__}: {error}") from None
