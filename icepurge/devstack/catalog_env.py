"""PyIceberg's own way to name a catalog for a process: PYICEBERG_CATALOG__<NAME>__<PROPERTY>."""

from __future__ import annotations


def pyiceberg_catalog_env(name: str, properties: dict[str, str]) -> dict[str, str]:
    """PyIceberg reads `__` as `.` and `_` as `-` in the property part, so `s3.access-key-id`
    becomes S3__ACCESS_KEY_ID; names and properties are read lowercased."""
    if "_" in name or "-" in name:
        raise ValueError(f"catalog name {name!r}: PyIceberg's variables can't carry '_' or '-' in it")
    prefix = f"PYICEBERG_CATALOG__{name.upper()}__"
    return {
        prefix + key.upper().replace(".", "__").replace("-", "_"): value for key, value in properties.items()
    }
