"""Which of a catalog's or a loaded table's IO properties a FileIO needs: the store's settings and
any credentials the catalog vended for the table, never the catalog's own settings (some are its
credentials, which a purge's request has no use for)."""

from __future__ import annotations

from typing import Any

# Catalog settings that PyIceberg merges into a table's FileIO properties but FileIO never reads;
# some are catalog credentials, which a purge's request has no use for.
_CATALOG_ONLY_KEYS = frozenset(
    {"uri", "credential", "token", "type", "warehouse", "prefix", "py-catalog-impl"}
)
_CATALOG_ONLY_PREFIXES = ("rest.", "oauth2-", "header.", "auth.", "scope", "audience", "resource")


def file_io_properties(properties: dict[str, Any]) -> dict[str, str]:
    """What a FileIO needs from a loaded table's IO: the store's settings and any credentials the
    catalog vended for this table."""
    return {
        key: value
        for key, value in properties.items()
        if isinstance(value, str)
        and key not in _CATALOG_ONLY_KEYS
        and not key.startswith(_CATALOG_ONLY_PREFIXES)
    }
