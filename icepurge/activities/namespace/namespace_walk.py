"""The enumeration's walk of a namespace tree: every table the selection selects, in the order the
purge takes them, each namespace's together; every entry it leaves, with why; the namespaces it
walked, deepest first. What it finds goes to the table list's pages as it goes: no more than a
page of names, and one namespace's listing, is in memory at once."""

from __future__ import annotations

from collections.abc import Callable

from pyiceberg.catalog import Catalog
from pyiceberg.typedef import Identifier
from temporalio import activity

from icepurge.activities.namespace.table_list_writer import TableListWriter
from icepurge.activities.namespace.table_selector import TableSelector
from icepurge.catalogs.entries import VIEW, Entry
from icepurge.catalogs.protection import protected
from icepurge.catalogs.registry import kind_of
from icepurge.contract.namespace_status import SkipKind, SkippedEntry
from icepurge.contract.namespace_steps import EnumerateInput, TableName
from icepurge.contract.table_list import NamespaceSpan
from icepurge.contract.table_selection import UNSELECTED

NOT_A_TABLE = "not_iceberg_table"


def dotted(catalog: str, levels: Identifier) -> str:
    return ".".join([catalog, *levels])


def _not_a_table(catalog: str, entry: Entry) -> SkippedEntry:
    """A view or another engine's entry: left alone, and listed with its kind."""
    if entry.kind == VIEW:
        return SkippedEntry(kind=SkipKind.VIEW, name=dotted(catalog, entry.identifier), reason=NOT_A_TABLE)
    return SkippedEntry(
        kind=SkipKind.ENTRY, name=dotted(catalog, entry.identifier), reason=f"{NOT_A_TABLE} ({entry.kind})"
    )


class NamespaceWalk:
    def __init__(
        self, catalog: Catalog, step: EnumerateInput, writer: TableListWriter, redact: Callable[[str], str]
    ) -> None:
        self._catalog = catalog
        self._step = step
        self._writer = writer
        rules = step.selection.rules(step.cutoff_ms) if step.selection else None
        self._selector = TableSelector(catalog, rules, redact)
        self._listed = frozenset(step.selection.tables) if step.selection else frozenset()
        self._listed_met: set[str] = set()
        self._namespaces = kind_of(catalog).namespace_lister()
        self.unselected = 0

    def walk(self, root: Identifier) -> list[NamespaceSpan]:
        """Writes the list's pages (not its index); the namespaces walked, deepest first, so that
        a parent is looked at once its children are gone."""
        spans: list[NamespaceSpan] = []
        pending = [root]
        while pending:
            namespace = pending.pop()
            first = self._writer.tables_total
            self._tables_of(namespace)
            if namespace:
                spans.append(
                    NamespaceSpan(levels=list(namespace), first=first, end=self._writer.tables_total)
                )
            if not namespace or self._step.nested:
                pending += self._children(namespace)
            activity.heartbeat(len(spans))
        self._listed_not_found()
        return sorted(spans, key=lambda span: len(span.levels), reverse=True)

    def _tables_of(self, namespace: Identifier) -> None:
        entries = kind_of(self._catalog).namespace_entries(namespace)
        for identifier in entries.tables:
            name = ".".join(identifier)
            if name in self._listed:
                self._listed_met.add(name)
            unmet = self._selector.unmet(identifier)
            if unmet is None:
                self._writer.table(TableName(namespace=list(identifier[:-1]), table=identifier[-1]))
                continue
            self.unselected += 1
            self._writer.skipped(
                SkippedEntry(kind=SkipKind.TABLE, name=dotted(self._step.catalog, identifier), reason=unmet)
            )
        for entry in entries.others:
            self._writer.skipped(_not_a_table(self._step.catalog, entry))

    def _children(self, namespace: Identifier) -> list[Identifier]:
        walked = []
        for child in self._namespaces.children(namespace):
            if protected(self._namespaces.properties(child)):
                self._writer.skipped(
                    SkippedEntry(
                        kind=SkipKind.NAMESPACE, name=dotted(self._step.catalog, child), reason="protected"
                    )
                )
                continue
            walked.append(child)
        return walked

    def _listed_not_found(self) -> None:
        """A listed table the walk never met: named, so that the list's typo shows."""
        for name in sorted(self._listed - self._listed_met):
            self.unselected += 1
            self._writer.skipped(
                SkippedEntry(
                    kind=SkipKind.TABLE,
                    name=f"{self._step.catalog}.{name}",
                    reason=f"{UNSELECTED}: listed, not found",
                )
            )
