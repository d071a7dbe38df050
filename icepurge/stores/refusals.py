"""How PyArrow and fsspec name a refusal in an OSError's text, when they don't raise
PermissionError."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_REFUSAL = re.compile(r"ACCESS_DENIED|AccessDenied|InvalidAccessKeyId|SignatureDoesNotMatch|\b403\b")
_ADDRESS = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)


def names_a_refusal(text: str, location: str) -> bool:
    """Whether an error's text says the store refused the read. Addresses are left out first: a
    file's UUID (…-4033-…) or an endpoint's port (:40312) holds "403", and a transient fault
    there must not become a final "access denied"."""
    text = text.replace(location, "").replace(urlsplit(location).path.lstrip("/"), "")
    return _REFUSAL.search(_ADDRESS.sub("", text)) is not None
