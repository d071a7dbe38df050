"""S3 and S3-compatible stores (s3://, s3a://, s3n://): one request per object operation
(PyArrow's file system sends a HEAD before every read), through obstore when the properties carry
their credentials and through the process's shared boto3 clients otherwise (s3_obstore says why);
listings through boto3 (a listing's continuation token is kept in checkpoints); bulk deletes
(DeleteObjects) as signed requests of icepurge's own where obstore is taken (s3_signed_deletes),
else through boto3: obstore's bulk delete gives no outcome per key."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from icepurge.stores.addresses import bucket_and_key
from icepurge.stores.bulk_deleting import BulkDeleting
from icepurge.stores.s3_client import s3_client
from icepurge.stores.s3_deletes import S3BulkDeleter, boto3_delete_objects
from icepurge.stores.s3_objects import Boto3Objects, as_os_errors
from icepurge.stores.s3_obstore import ObstoreObjects, takes_obstore
from icepurge.stores.s3_signed_deletes import signed_deletes, takes_signed_deletes
from icepurge.stores.store import Listed, ListedPage, ObjectHead, StoreContext

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


class S3Store(BulkDeleting):
    def __init__(self, context: StoreContext) -> None:
        self._context = context
        self._boto3 = Boto3Objects(context.properties, context.connections, context.attempts)
        self._obstore = ObstoreObjects(context.properties, context.connections, context.attempts, self._boto3)

    def read(self, uri: str) -> bytes:
        return self._objects().get(*bucket_and_key(uri))

    def write(self, uri: str, data: bytes) -> None:
        self._objects().put(*bucket_and_key(uri), data)

    def delete(self, uri: str) -> None:
        """Through boto3: obstore sends even one key as a DeleteObjects, whose refusals come back
        per key in a 200 answer."""
        self._boto3.delete(*bucket_and_key(uri))

    def _bulk_deleter(self) -> S3BulkDeleter:
        bulk = self._context.bulk()
        # Attempts are the deleter's own (it counts throttling), not boto3's.
        properties, connections = self._context.properties, bulk.concurrency + 2
        client = s3_client(properties, max_connections=connections, max_attempts=1)
        send = (
            signed_deletes(properties, connections).delete_objects
            if takes_signed_deletes(properties)
            else boto3_delete_objects(client)
        )
        return S3BulkDeleter(client, send, bulk)

    def list_page(self, prefix: str, token: str | None, limit: int, flat: bool) -> ListedPage:
        bucket, key_prefix = bucket_and_key(prefix.rstrip("/") + "/")
        arguments: dict[str, Any] = {"Bucket": bucket, "Prefix": key_prefix, "MaxKeys": limit}
        if flat:
            arguments["Delimiter"] = "/"
        if token:
            arguments["ContinuationToken"] = token
        with as_os_errors(prefix):
            answer = self._client().list_objects_v2(**arguments)
        return ListedPage(
            objects=[
                Listed(f"s3://{bucket}/{item['Key']}", item["LastModified"])
                for item in answer.get("Contents", [])
            ],
            folders=[
                f"s3://{bucket}/{found['Prefix'].rstrip('/')}" for found in answer.get("CommonPrefixes", [])
            ],
            next_token=answer.get("NextContinuationToken") if answer.get("IsTruncated") else None,
        )

    def head(self, uri: str) -> ObjectHead | None:
        return self._objects().head(*bucket_and_key(uri))

    def _objects(self) -> Boto3Objects | ObstoreObjects:
        # Asked on every request: a process forked since the last one must not use obstore.
        return self._obstore if takes_obstore(self._context.properties) else self._boto3

    def _client(self) -> S3Client:
        return s3_client(
            self._context.properties,
            max_connections=self._context.connections,
            max_attempts=self._context.attempts,
        )
