"""Asks a namespace purge's selection of each table the enumeration finds: by its name first, then,
when a condition needs it, by its metadata, which the catalog loads. A table whose metadata can't
be read is not selected (and says why): a selection is never guessed in a table's favour."""

from __future__ import annotations

from collections.abc import Callable

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.typedef import Identifier

from icepurge.catalogs.registry import kind_of
from icepurge.contract.table_selection import UNSELECTED, SelectionRules

GONE = "gone"


class TableSelector:
    def __init__(self, catalog: Catalog, rules: SelectionRules | None, redact: Callable[[str], str]) -> None:
        self._kind = kind_of(catalog)
        self._rules = rules
        self._redact = redact

    def unmet(self, identifier: Identifier) -> str | None:
        """Why the table is left alone, or None when it is selected."""
        rules = self._rules
        if rules is None:
            return None
        unmet = rules.unmet_by_name(".".join(identifier))
        if unmet is not None or not rules.reads_metadata:
            return unmet
        try:
            metadata = self._kind.load(identifier).metadata
        except NoSuchTableError:
            return GONE
        except (ConnectionError, TimeoutError):
            # The catalog or the store is away: the whole step retries, rather than leave it out.
            raise
        except (OSError, ValueError) as error:
            reason = self._redact(f"{type(error).__name__}: {error}")
            return f"{UNSELECTED}: its metadata can't be read to check the selection ({reason})"
        return rules.unmet_by_metadata(metadata.properties, metadata.last_updated_ms)
