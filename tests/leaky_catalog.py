"""A fault injected on purpose: a catalog whose load fails with an error that quotes its own
credential, as a careless server's error page might."""

from __future__ import annotations

from typing import Any

from pyiceberg.catalog.sql import SqlCatalog


class LeakyCatalog(SqlCatalog):
    def load_table(self, identifier: Any) -> Any:
        raise PermissionError(f"403 for credential {self.properties['credential']}")
