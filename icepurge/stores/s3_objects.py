"""Whole S3 objects through the process's shared boto3 client: one request each (PyArrow's file
system sends a HEAD before every read), errors as the FileIO's would be. FileNotFoundError for a
404, PermissionError for a 403, and an OSError naming the store's code for anything else."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from icepurge.stores.s3_client import s3_client
from icepurge.stores.store import ObjectHead

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

_MISSING_CODES = frozenset({"NoSuchKey", "NotFound", "NoSuchBucket", "404"})


class Boto3Objects:
    """`attempts` counts the first attempt too; `connections` sizes the shared client's pool."""

    def __init__(self, properties: dict[str, str], connections: int, attempts: int) -> None:
        self._properties = properties
        self._connections = connections
        self._attempts = attempts

    def get(self, bucket: str, key: str) -> bytes:
        with as_os_errors(f"s3://{bucket}/{key}"):
            return self._client().get_object(Bucket=bucket, Key=key)["Body"].read()

    def put(self, bucket: str, key: str, body: bytes) -> None:
        with as_os_errors(f"s3://{bucket}/{key}"):
            self._client().put_object(Bucket=bucket, Key=key, Body=body)

    def delete(self, bucket: str, key: str) -> None:
        """Deleting an absent key succeeds, as S3 answers."""
        with as_os_errors(f"s3://{bucket}/{key}"):
            self._client().delete_object(Bucket=bucket, Key=key)

    def head(self, bucket: str, key: str) -> ObjectHead | None:
        try:
            with as_os_errors(f"s3://{bucket}/{key}"):
                answer = self._client().head_object(Bucket=bucket, Key=key)
        except FileNotFoundError:
            return None
        modified: datetime = answer["LastModified"]
        return ObjectHead(size=int(answer["ContentLength"]), modified=modified)

    def _client(self) -> S3Client:
        return s3_client(self._properties, max_connections=self._connections, max_attempts=self._attempts)


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
