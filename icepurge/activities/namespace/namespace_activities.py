"""A namespace purge's catalog steps: walk the namespace tree into a table list kept in the
state location, hand it out a page at a time, and drop the namespaces its purges left empty."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchNamespaceError
from pyiceberg.typedef import Identifier
from temporalio import activity
from temporalio.exceptions import ApplicationError

from icepurge.activities.catalog.catalog_calls import CatalogCalls
from icepurge.activities.namespace.table_lists import NamespaceTree, TableLists
from icepurge.activities.namespace.table_selector import TableSelector
from icepurge.activities.signals.progress_signals import ProgressSignals
from icepurge.activities.step_definition import implements
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.catalogs.entries import VIEW, Entry
from icepurge.catalogs.namespace_drops import DropPreview, children, drop_if_empty
from icepurge.catalogs.protection import protected, protected_ancestor
from icepurge.catalogs.registry import kind_of
from icepurge.contract.activity_steps import DROP_NAMESPACES, ENUMERATE, TABLE_PAGE
from icepurge.contract.names import (
    DROP_NAMESPACES_ACTIVITY,
    ENUMERATE_ACTIVITY,
    ERROR_NAMESPACE_NOT_FOUND,
    ERROR_PROTECTED,
    FAILURE_SAMPLE_SIZE,
    PROTECTED_PROPERTY,
)
from icepurge.contract.namespace_status import SkipKind, SkippedEntry
from icepurge.contract.namespace_steps import (
    DropNamespacesInput,
    DropNamespacesResult,
    EnumerateInput,
    EnumerationSummary,
    TableName,
    TablePage,
    TablePageInput,
)
from icepurge.contract.table_selection import UNSELECTED
from icepurge.state.state_store import StateStore

NOT_A_TABLE = "not_iceberg_table"


class DropCheckpoint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    next_index: int = 0
    dropped: int = 0
    kept_total: int = 0
    kept_sample: list[SkippedEntry] = Field(default_factory=list)


def _dotted(catalog: str, levels: Identifier) -> str:
    return ".".join([catalog, *levels])


def _not_a_table(catalog: str, entry: Entry) -> SkippedEntry:
    """A view or another engine's entry: left alone, and listed with its kind."""
    if entry.kind == VIEW:
        return SkippedEntry(kind=SkipKind.VIEW, name=_dotted(catalog, entry.identifier), reason=NOT_A_TABLE)
    return SkippedEntry(
        kind=SkipKind.ENTRY, name=_dotted(catalog, entry.identifier), reason=f"{NOT_A_TABLE} ({entry.kind})"
    )


class NamespaceActivities(CatalogCalls):
    def __init__(
        self,
        registry: CatalogRegistry,
        state: StateStore,
        lists: TableLists,
        signals: ProgressSignals | None = None,
    ) -> None:
        super().__init__(registry, signals)
        self._state = state
        self._lists = lists

    @property
    def all(self) -> list[Any]:
        return [self.enumerate_namespace, self.read_table_page, self.drop_empty_namespaces]

    @implements(ENUMERATE)
    def enumerate_namespace(self, step: EnumerateInput) -> EnumerationSummary:
        with self._step(ENUMERATE_ACTIVITY):
            catalog = self._catalog(step.catalog)
            root = kind_of(catalog).spelled_as_listed(step.namespace)
            self._check_root(catalog, step, root)
            tree, unselected = self._walk(catalog, step, root)
            chain = [step.run_chain] if step.run_chain else []
            location = self._state.uri("namespace-purges", step.purge_id, *chain, "tree.json")
            self._state.write(location, tree, compress=True)
            return EnumerationSummary(
                tree_location=location,
                tables_total=len(tree.tables),
                namespaces_total=len(tree.namespaces),
                entries_skipped=len(tree.skipped) - unselected,
                tables_unselected=unselected,
                skipped_sample=tree.skipped[:FAILURE_SAMPLE_SIZE],
            )

    def _check_root(self, catalog: Catalog, step: EnumerateInput, root: Identifier) -> None:
        if not root:
            return
        if not catalog.namespace_exists(root):
            raise ApplicationError(
                f"catalog {step.catalog!r} has no namespace {'.'.join(root)}",
                type=ERROR_NAMESPACE_NOT_FOUND,
                non_retryable=True,
            )
        holder, _ = protected_ancestor(catalog, list(root))
        if holder is not None:
            raise ApplicationError(
                f"{holder} says {PROTECTED_PROPERTY}=true: nothing in it is dropped or purged; "
                "remove the property to allow it",
                type=ERROR_PROTECTED,
                non_retryable=True,
            )

    def _walk(self, catalog: Catalog, step: EnumerateInput, root: Identifier) -> tuple[NamespaceTree, int]:
        """The tree, and how many of its skipped entries are tables the selection left alone."""
        tables: list[TableName] = []
        namespaces: list[Identifier] = [root] if root else []
        skipped: list[SkippedEntry] = []
        rules = step.selection.rules(step.cutoff_ms) if step.selection else None
        selector = TableSelector(catalog, rules, self._registry.redact)
        unselected = 0
        pending = [root]
        while pending:
            namespace = pending.pop()
            entries = kind_of(catalog).namespace_entries(namespace)
            for identifier in entries.tables:
                unmet = selector.unmet(identifier)
                if unmet is None:
                    tables.append(TableName(namespace=list(identifier[:-1]), table=identifier[-1]))
                    continue
                unselected += 1
                skipped.append(
                    SkippedEntry(kind=SkipKind.TABLE, name=_dotted(step.catalog, identifier), reason=unmet)
                )
            skipped += [_not_a_table(step.catalog, entry) for entry in entries.others]
            if namespace and not step.nested:
                continue
            for child in children(catalog, namespace):
                if protected(self._properties(catalog, child)):
                    skipped.append(
                        SkippedEntry(
                            kind=SkipKind.NAMESPACE, name=_dotted(step.catalog, child), reason="protected"
                        )
                    )
                    continue
                namespaces.append(child)
                pending.append(child)
            activity.heartbeat(len(namespaces))
        missing = _listed_not_found(step, tables, skipped)
        # Deepest first, so that a parent is looked at once its children are gone.
        ordered = sorted(namespaces, key=len, reverse=True)
        tree = NamespaceTree(
            tables=tables, namespaces=[list(ns) for ns in ordered], skipped=skipped + missing
        )
        return tree, unselected + len(missing)

    @staticmethod
    def _properties(catalog: Catalog, namespace: Identifier) -> dict[str, str]:
        try:
            return catalog.load_namespace_properties(namespace)
        except NoSuchNamespaceError:
            return {}

    @implements(TABLE_PAGE)
    def read_table_page(self, step: TablePageInput) -> TablePage:
        return TablePage(tables=self._lists.names(step.tree_location, step.offset, step.limit))

    @implements(DROP_NAMESPACES)
    def drop_empty_namespaces(self, step: DropNamespacesInput) -> DropNamespacesResult:
        """Deepest first; a namespace that still holds anything stays, and says what. Heartbeats
        its place, so a retry neither drops nor counts twice."""
        with self._step(DROP_NAMESPACES_ACTIVITY):
            catalog = self._catalog(step.catalog)
            tree = self._lists.tree(step.tree_location)
            preview = _preview(tree, step)
            details = activity.info().heartbeat_details
            # A preview changes nothing: a retry starts it over rather than keep its sets.
            resumed = details and preview is None
            done = DropCheckpoint.model_validate(details[0]) if resumed else DropCheckpoint()
            for index in range(done.next_index, len(tree.namespaces)):
                namespace = tuple(tree.namespaces[index])
                kept = drop_if_empty(catalog, step.catalog, namespace, preview)
                if kept is None:
                    done.dropped += 1
                elif kept:
                    done.kept_total += 1
                    if len(done.kept_sample) < FAILURE_SAMPLE_SIZE:
                        done.kept_sample.append(
                            SkippedEntry(
                                kind=SkipKind.NAMESPACE, name=_dotted(step.catalog, namespace), reason=kept
                            )
                        )
                done.next_index = index + 1
                activity.heartbeat(done.model_dump(mode="json"))
            return DropNamespacesResult(
                dropped=done.dropped, kept_total=done.kept_total, kept_sample=done.kept_sample
            )


def _listed_not_found(
    step: EnumerateInput, tables: list[TableName], skipped: list[SkippedEntry]
) -> list[SkippedEntry]:
    """A listed table the walk never met: named, so that the list's typo shows."""
    if step.selection is None or not step.selection.tables:
        return []
    met = {".".join([*table.namespace, table.table]) for table in tables}
    met |= {entry.name.removeprefix(f"{step.catalog}.") for entry in skipped if entry.kind is SkipKind.TABLE}
    return [
        SkippedEntry(
            kind=SkipKind.TABLE, name=f"{step.catalog}.{name}", reason=f"{UNSELECTED}: listed, not found"
        )
        for name in sorted(set(step.selection.tables) - met)
    ]


def _preview(tree: NamespaceTree, step: DropNamespacesInput) -> DropPreview | None:
    """A dry run's drops: its tables count as gone but for those its previews would not purge."""
    if not step.preview:
        return None
    kept = set(step.kept_tables)
    purged = ((*table.namespace, table.table) for index, table in enumerate(tree.tables) if index not in kept)
    return DropPreview(purged=frozenset(purged))
