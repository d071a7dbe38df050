"""A namespace purge's catalog steps: walk the namespace tree into a table list kept in the
state location, hand it out a page at a time, and drop the namespaces its purges left empty."""

from __future__ import annotations

from pydantic import Field
from pyiceberg.typedef import Identifier
from temporalio import activity
from temporalio.exceptions import ApplicationError

from icepurge.activities.catalog.catalog_calls import CatalogCalls
from icepurge.activities.namespace.namespace_walk import NamespaceWalk, dotted
from icepurge.activities.namespace.table_list_writer import TableListWriter
from icepurge.activities.namespace.table_lists import TableLists
from icepurge.activities.signals.progress_signals import ProgressSignals
from icepurge.activities.step_definition import implements
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.catalogs.kind import CatalogKind
from icepurge.catalogs.namespace_drops import DropPreview, drop_if_empty
from icepurge.catalogs.protection import protected_ancestor
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
    TablePage,
    TablePageInput,
)
from icepurge.contract.strict_model import StrictModel
from icepurge.contract.table_list import INDEX_NAME, PAGE_ENTRIES, NamespaceSpan
from icepurge.state.state_store import StateStore


class DropCheckpoint(StrictModel):
    next_index: int = 0
    dropped: int = 0
    kept_total: int = 0
    kept_sample: list[SkippedEntry] = Field(default_factory=list)


class NamespaceActivities(CatalogCalls):
    def __init__(
        self,
        registry: CatalogRegistry,
        state: StateStore,
        lists: TableLists,
        signals: ProgressSignals | None = None,
        page_entries: int = PAGE_ENTRIES,
    ) -> None:
        super().__init__(registry, signals)
        self._state = state
        self._lists = lists
        self._page_entries = page_entries

    @implements(ENUMERATE)
    def enumerate_namespace(self, step: EnumerateInput) -> EnumerationSummary:
        with self._step(ENUMERATE_ACTIVITY):
            catalog = self._catalog(step.catalog)
            kind = kind_of(catalog)
            root = kind.spelled_as_listed(step.namespace)
            self._check_root(kind, step, root)
            chain = [step.run_chain] if step.run_chain else []
            # Each attempt writes a list of its own: an attempt the server (or the workflow, for
            # the one inside its task) gave up on, still walking, must not mix its pages into the
            # list the purge goes on with. The local attempt and the activity's first share a number.
            info = activity.info()
            attempt = f"{'local-' if info.is_local else ''}attempt-{info.attempt}"
            location = self._state.uri("namespace-purges", step.purge_id, *chain, attempt, INDEX_NAME)
            writer = TableListWriter(self._state, location, self._page_entries)
            walk = NamespaceWalk(catalog, step, writer, self._registry.redact)
            namespaces = walk.walk(root)
            writer.finish(namespaces)
            return EnumerationSummary(
                tree_location=location,
                tables_total=writer.tables_total,
                namespaces_total=len(namespaces),
                entries_skipped=writer.skipped_total - walk.unselected,
                tables_unselected=walk.unselected,
                skipped_sample=writer.skipped_sample,
            )

    def _check_root(self, kind: CatalogKind, step: EnumerateInput, root: Identifier) -> None:
        if not root:
            return
        if not kind.namespace_exists(root):
            raise ApplicationError(
                f"catalog {step.catalog!r} has no namespace {'.'.join(root)}",
                type=ERROR_NAMESPACE_NOT_FOUND,
                non_retryable=True,
            )
        holder, _ = protected_ancestor(kind, list(root))
        if holder is not None:
            raise ApplicationError(
                f"{holder} says {PROTECTED_PROPERTY}=true: nothing in it is dropped or purged; "
                "remove the property to allow it",
                type=ERROR_PROTECTED,
                non_retryable=True,
            )

    @implements(TABLE_PAGE)
    def read_table_page(self, step: TablePageInput) -> TablePage:
        return TablePage(tables=self._lists.names(step.tree_location, step.offset, step.limit))

    @implements(DROP_NAMESPACES)
    def drop_empty_namespaces(self, step: DropNamespacesInput) -> DropNamespacesResult:
        """Deepest first; a namespace that still holds anything stays, and says what. Heartbeats
        its place, so a retry neither drops nor counts twice."""
        with self._step(DROP_NAMESPACES_ACTIVITY):
            catalog = self._catalog(step.catalog)
            namespaces = self._lists.index(step.tree_location).namespaces
            kept_tables = frozenset(step.kept_tables)
            # A preview's drops so far: a parent counts its children as gone.
            previewed: set[Identifier] = set()
            details = activity.info().heartbeat_details
            # A preview changes nothing: a retry starts it over rather than keep its sets.
            resumed = details and not step.preview
            done = DropCheckpoint.model_validate(details[0]) if resumed else DropCheckpoint()
            for index in range(done.next_index, len(namespaces)):
                span = namespaces[index]
                namespace = tuple(span.levels)
                preview = self._preview(step, span, kept_tables, previewed) if step.preview else None
                kept = drop_if_empty(catalog, step.catalog, namespace, preview)
                if kept is None:
                    done.dropped += 1
                elif kept:
                    done.kept_total += 1
                    if len(done.kept_sample) < FAILURE_SAMPLE_SIZE:
                        done.kept_sample.append(
                            SkippedEntry(
                                kind=SkipKind.NAMESPACE, name=dotted(step.catalog, namespace), reason=kept
                            )
                        )
                done.next_index = index + 1
                activity.heartbeat(done.model_dump(mode="json"))
            return DropNamespacesResult(
                dropped=done.dropped, kept_total=done.kept_total, kept_sample=done.kept_sample
            )

    def _preview(
        self, step: DropNamespacesInput, span: NamespaceSpan, kept: frozenset[int], dropped: set[Identifier]
    ) -> DropPreview:
        """A dry run's view of one namespace: its tables in the list count as gone, but for those
        its previews would not purge; read from the list's pages that hold them, no more."""
        names = self._lists.names(step.tree_location, span.first, span.end - span.first)
        purged = (
            (*table.namespace, table.table)
            for place, table in enumerate(names, start=span.first)
            if place not in kept
        )
        return DropPreview(purged=frozenset(purged), dropped=dropped)
