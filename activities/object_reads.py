"""Whole-object reads for planning. On S3 and Azure one GET per file: PyArrow's S3 file system
sends a HEAD before every read (for the size, which a whole read doesn't need), doubling the
requests a plan costs; adlfs does the same. Other stores read through the FileIO.

Errors come out as the FileIO's would: FileNotFoundError for a 404, PermissionError for a 403,
and an OSError naming the store's code for anything else, which read_retrying retries (or, for a
configuration fault, hands to the activity's bounded retry)."""

from __future__ import annotations

from urllib.parse import urlsplit

from azure.core.exceptions import AzureError, HttpResponseError, ResourceNotFoundError
from botocore.exceptions import BotoCoreError, ClientError
from pyiceberg.io import FileIO

from activities.azure_client import AZURE_SCHEMES, blob_address, blob_service, safe_message
from activities.locations import S3_SCHEMES, scheme_of
from activities.s3_client import s3_client

# Reads at once per process and store; the shared client's connection pool.
READ_CONNECTIONS = 16
_MISSING_CODES = frozenset({"NoSuchKey", "NotFound", "NoSuchBucket", "404"})


def read_object(io: FileIO, location: str) -> bytes:
    scheme = scheme_of(location)
    if scheme in AZURE_SCHEMES:
        return _read_blob(io.properties, location)
    if scheme not in S3_SCHEMES:
        with io.new_input(location).open(seekable=False) as stream:
            return stream.read()
    parts = urlsplit(location)
    client = s3_client(io.properties, max_connections=READ_CONNECTIONS, max_attempts=1)
    try:
        response = client.get_object(Bucket=parts.netloc, Key=parts.path.lstrip("/"))
        return response["Body"].read()
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


def _read_blob(properties: dict[str, str], location: str) -> bytes:
    address = blob_address(location)
    try:
        client = blob_service(properties, address.account, READ_CONNECTIONS)
        return client.get_blob_client(address.container, address.name).download_blob().readall()
    except ResourceNotFoundError:
        raise FileNotFoundError(f"BlobNotFound ({location})") from None
    except HttpResponseError as error:
        text = f"{getattr(error, 'error_code', None) or error.status_code}: {error.reason} ({location})"
        if error.status_code == 403:
            raise PermissionError(text) from None
        raise OSError(text) from None
    except AzureError as error:
        raise OSError(f"{type(error).__name__}: {safe_message(error)}") from None
