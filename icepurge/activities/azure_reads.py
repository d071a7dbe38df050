"""One GET per blob (adlfs sends a HEAD first), with errors as the FileIO's would be:
FileNotFoundError for a 404, PermissionError for a 403, an OSError naming the code otherwise."""

from __future__ import annotations

from azure.core.exceptions import AzureError, HttpResponseError, ResourceNotFoundError

from icepurge.activities.azure_client import blob_service, safe_message
from icepurge.activities.blob_address import blob_address


def read_blob(properties: dict[str, str], location: str, connections: int) -> bytes:
    address = blob_address(location)
    try:
        client = blob_service(properties, address.account, connections)
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
