"""The catalogs a process knows, by name, from PyIceberg's own configuration (`.pyiceberg.yaml`,
or `PYICEBERG_CATALOG__<NAME>__<PROPERTY>` variables): every catalog type PyIceberg speaks.

Catalog properties hold credentials (a database URI's password, an OAuth credential, SigV4
keys): they stay in this process. Names may be listed; properties never leave, and every
message built from a catalog's error goes through `redact` first.
"""

from __future__ import annotations

import re
import threading
from urllib.parse import urlsplit

from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.io import FileIO
from pyiceberg.typedef import EMPTY_DICT, Properties
from pyiceberg.utils.config import Config

from icepurge.stores.deferred_file_io import DeferredFileIO

_SECRET_KEY = re.compile(
    r"secret|password|token|credential|session|private|signature|account-key|connection-string",
    re.IGNORECASE,
)
# Values this short can't be told from ordinary words in a message.
_SHORTEST_REDACTED = 4
REDACTED = "***"


class CatalogNotConfiguredError(LookupError):
    """No catalog of that name in this process's PyIceberg configuration."""


def _secret_values(properties: dict[str, str]) -> set[str]:
    secrets = {value for key, value in properties.items() if _SECRET_KEY.search(key)}
    for value in properties.values():
        if "://" in value:
            password = urlsplit(value).password
            if password:
                secrets.add(password)
    return {secret for secret in secrets if len(secret) >= _SHORTEST_REDACTED}


class CatalogRegistry:
    """Catalog connections opened on first use and kept for the life of the process."""

    def __init__(self, configurations: dict[str, dict[str, str]]) -> None:
        self._configurations = {name.lower(): dict(props) for name, props in configurations.items()}
        self._secrets = sorted(
            {secret for props in self._configurations.values() for secret in _secret_values(props)},
            key=len,
            reverse=True,
        )
        self._open: dict[str, Catalog] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_pyiceberg_config(cls) -> CatalogRegistry:
        """Read now, not at PyIceberg's import: a process configured after importing it still
        finds its catalogs."""
        found = Config().config.get("catalog", {})
        configurations: dict[str, dict[str, str]] = {}
        if isinstance(found, dict):
            for name, properties in found.items():
                if isinstance(properties, dict):
                    configurations[str(name)] = {
                        str(key): str(value)
                        for key, value in properties.items()
                        if not isinstance(value, dict)
                    }
        return cls(configurations)

    def names(self) -> list[str]:
        return sorted(self._configurations)

    def knows(self, name: str) -> bool:
        return name.lower() in self._configurations

    def properties(self, name: str) -> dict[str, str] | None:
        """A copy of the catalog's PyIceberg properties (credentials included: never log them)."""
        found = self._configurations.get(name.lower())
        return dict(found) if found is not None else None

    def catalog(self, name: str) -> Catalog:
        key = name.lower()
        with self._lock:
            if key in self._open:
                return self._open[key]
        properties = self._configurations.get(key)
        if properties is None:
            raise CatalogNotConfiguredError(
                f"catalog {name!r} is not configured on this worker; configure it the PyIceberg way "
                f"(.pyiceberg.yaml or PYICEBERG_CATALOG__{key.upper()}__<PROPERTY>)"
            )
        opened = _deferring_table_file_io(load_catalog(key, **properties))
        with self._lock:
            return self._open.setdefault(key, opened)

    def redact(self, text: str) -> str:
        """The message with every configured catalog secret replaced."""
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text


def _deferring_table_file_io(catalog: Catalog) -> Catalog:
    """Tables the catalog loads get a DeferredFileIO: PyIceberg's catalogs (SQL, REST, Glue, Hive)
    build a table's FileIO in `_load_file_io`, from the catalog's properties merged with the
    table's; the merge is kept, only the build waits for a request that needs it."""

    def load(properties: Properties = EMPTY_DICT, location: str | None = None) -> FileIO:
        return DeferredFileIO({**catalog.properties, **properties}, location)

    catalog._load_file_io = load  # type: ignore[method-assign]
    return catalog
