"""DeleteObjects as one signed POST, without boto3's client: botocore signs it (SigV4) and sends it
on its own urllib3 session, and the answer is read here. boto3's client spends ~3 ms of CPU on a
DeleteObjects of a few keys (bench.s3_client_cpu), and a small table's purge sends six: the
largest share of the worker's CPU left in the namespace purge's profile (BENCHMARKS.md, "A small
table's CPU"). The answer comes back as boto3's client gives it (`{"Errors": [...]}`) and
failures as it raises them (ClientError with the store's code and status, botocore's connection
errors), so S3BulkDeleter retries, throttles and counts exactly as it does with boto3.

Taken where the properties carry the credentials and an endpoint addressed path-style (the
embedded stores and most S3-compatible ones): elsewhere boto3's client, which knows AWS's
endpoints, its addressing rules and the credential chain."""

from __future__ import annotations

import functools
import hashlib
import os
import socket
from base64 import b64encode
from typing import Any
from urllib.parse import quote
from xml.etree import ElementTree
from xml.sax.saxutils import escape

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError
from botocore.httpsession import URLLib3Session
from botocore.utils import get_environ_proxies

from icepurge.stores.s3_client import credentials_given, first_property, virtual_addressing
from icepurge.stores.s3_obstore import obstore_chosen
from icepurge.stores.shared_pools import pooled_connections

# Room for every store and credential set a worker deletes from at once, as s3_client's.
_SHARED_SENDERS = 32
_CONNECT_SECONDS = 10
_READ_SECONDS = 60
_CA_BUNDLE_VARIABLE = "AWS_CA_BUNDLE"
_OPERATION = "DeleteObjects"


def takes_signed_deletes(properties: dict[str, str]) -> bool:
    """As obstore is taken (ICEPURGE_S3_CLIENT, credentials given), at an endpoint given and
    addressed path-style. Forking is no reason against: unlike obstore's runtime, the session is
    plain sockets, and a forked process builds its own (`signed_deletes`)."""
    return (
        obstore_chosen()
        and credentials_given(properties)
        and bool(first_property(properties, "endpoint_url"))
        and not virtual_addressing(properties)
    )


def signed_deletes(properties: dict[str, str], connections: int) -> SignedDeleteObjects:
    """Shared by every deleter of the process with the same properties, as boto3's clients are;
    never with a process forked since, which would write on its parent's pooled connections."""
    return _shared(tuple(sorted(properties.items())), connections, os.getpid())


@functools.lru_cache(maxsize=_SHARED_SENDERS)
def _shared(items: tuple[tuple[str, str], ...], connections: int, _pid: int) -> SignedDeleteObjects:
    return SignedDeleteObjects(dict(items), connections)


class SignedDeleteObjects:
    def __init__(self, properties: dict[str, str], connections: int) -> None:
        endpoint = first_property(properties, "endpoint_url") or ""
        self._endpoint = endpoint.rstrip("/")
        credentials = Credentials(
            first_property(properties, "aws_access_key_id") or "",
            first_property(properties, "aws_secret_access_key") or "",
            first_property(properties, "aws_session_token"),
        )
        self._auth = S3SigV4Auth(credentials, "s3", first_property(properties, "region_name") or "us-east-1")
        # As botocore's own endpoint passes them (its stubs type them otherwise): a CA bundle's
        # path, a (connect, read) pair, and TCP_NODELAY as boto3's clients set it: botocore writes
        # a request's headers and body apart, and without it Nagle's algorithm holds the body
        # back for the store's delayed ACK (~40 ms a request).
        options: dict[str, Any] = {
            "verify": os.environ.get(_CA_BUNDLE_VARIABLE) or True,
            "timeout": (_CONNECT_SECONDS, _READ_SECONDS),
            "socket_options": [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        }
        self._session = URLLib3Session(
            proxies=get_environ_proxies(endpoint),
            max_pool_connections=pooled_connections(connections),
            **options,
        )

    def delete_objects(self, bucket: str, keys: list[str]) -> dict[str, Any]:
        """Raises botocore's errors as boto3's client would: ClientError for an answer other
        than 200, its connection errors for a request that got none."""
        body = _request_body(keys)
        request = AWSRequest(
            method="POST",
            url=f"{self._endpoint}/{quote(bucket)}?delete",
            data=body,
            headers={
                "Content-MD5": b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode(),
                "Content-Type": "application/xml",
            },
        )
        self._auth.add_auth(request)
        answer = self._session.send(request.prepare())
        if answer.status_code == 200 and not answer.content.strip():
            # Quiet mode lists only the keys that failed: an empty answer lists none (boto3 reads
            # it so too).
            return {"Errors": []}
        root = _parsed(answer.content)
        if answer.status_code != 200 or root is None or _local(root) == "Error":
            raise ClientError(_error_response(root, answer.status_code), _OPERATION)
        return {"Errors": [_fields(error) for error in root if _local(error) == "Error"]}


def _request_body(keys: list[str]) -> bytes:
    objects = "".join(f"<Object><Key>{escape(key)}</Key></Object>" for key in keys)
    return (
        f'<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet>{objects}</Delete>'
    ).encode()


def _parsed(content: bytes) -> ElementTree.Element | None:
    try:
        # The store's answer: expat 2.4.1+ (Python's since 3.11's builds) refuses entity
        # amplification, and ElementTree resolves no external entity.
        return ElementTree.fromstring(content)  # noqa: S314
    except ElementTree.ParseError:
        return None


def _local(element: ElementTree.Element | None) -> str:
    """The tag without its namespace (S3 names one; some compatible stores don't)."""
    return "" if element is None else element.tag.rpartition("}")[2]


def _fields(element: ElementTree.Element) -> dict[str, str]:
    return {_local(child): child.text or "" for child in element}


def _error_response(root: ElementTree.Element | None, status: int) -> Any:
    """boto3's shape of a failed answer; a 200 that says nothing readable is a failure too (boto3
    can't parse it either), never keys counted deleted."""
    fields = _fields(root) if root is not None and _local(root) == "Error" else {}
    unread = str(status) if status != 200 else "UnreadableAnswer"
    error = {"Code": fields.get("Code") or unread, "Message": fields.get("Message", "")}
    return {"Error": error, "ResponseMetadata": {"HTTPStatusCode": status}}
