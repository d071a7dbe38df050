"""A namespace purge's table list in the state location, as the enumeration writes it: an index
object and pages of names and of skipped entries beside it, so that no object (and no reader)
ever holds every name. Lists written before pages were one object, `tree.json`, with every table,
namespace and skipped entry in it: both are read."""

from __future__ import annotations

from pydantic import Field

from icepurge.contract.namespace_status import SkippedEntry
from icepurge.contract.namespace_steps import TableName
from icepurge.contract.strict_model import StrictModel

# Names (or skipped entries) in one page object: ~0.6 MB of JSON, well under a second to read.
PAGE_ENTRIES = 10_000
INDEX_NAME = "table-list.json"
LEGACY_TREE_NAME = "tree.json"


class NamespaceSpan(StrictModel):
    """A walked namespace and where its selected tables sit in the list (the walk lists one
    namespace's tables together)."""

    levels: list[str]
    first: int = Field(ge=0)
    end: int = Field(ge=0)


class TableListIndex(StrictModel):
    page_entries: int = Field(ge=1)
    tables_total: int = Field(ge=0)
    skipped_total: int = Field(ge=0)
    namespaces: list[NamespaceSpan] = Field(description="Walked namespaces, deepest first.")


class TablesPage(StrictModel):
    tables: list[TableName]


class SkippedEntriesPage(StrictModel):
    skipped: list[SkippedEntry]


def is_legacy(location: str) -> bool:
    return location.endswith("/" + LEGACY_TREE_NAME)


def _beside(index_location: str, folder: str, page: int) -> str:
    return f"{index_location.rsplit('/', 1)[0]}/{folder}/{page:08d}.json"


def tables_page_location(index_location: str, page: int) -> str:
    return _beside(index_location, "tables", page)


def skipped_page_location(index_location: str, page: int) -> str:
    return _beside(index_location, "skipped", page)


def pages_over(offset: int, limit: int, page_entries: int) -> range:
    """The pages that hold entries [offset, offset + limit)."""
    return range(offset // page_entries, (offset + limit - 1) // page_entries + 1)
