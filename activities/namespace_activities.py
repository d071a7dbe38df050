"""A namespace purge's catalog steps: walk the namespace tree into a table list kept in the
state location, hand it out a page at a time, and drop the namespaces its purges left empty."""

from __future__ import annotations

import threading
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NamespaceNotEmptyError, NoSuchNamespaceError
from pyiceberg.typedef import Identifier
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.catalog_calls import CatalogCalls, protected, protected_ancestor
from activities.catalogs import CatalogRegistry
from activities.progress_signals import ProgressSignals
from activities.state_store import StateStore
from workflows.constants import (
    DROP_NAMESPACES_ACTIVITY,
    ENUMERATE_ACTIVITY,
    ERROR_NAMESPACE_NOT_FOUND,
    ERROR_PROTECTED,
    FAILURE_SAMPLE_SIZE,
    PROTECTED_PROPERTY,
    TABLE_PAGE_ACTIVITY,
)
from workflows.namespace_status import SkipKind, SkippedEntry
from workflows.namespace_steps import (
    DropNamespacesInput,
    DropNamespacesResult,
    EnumerateInput,
    EnumerationSummary,
    TableName,
    TablePage,
    TablePageInput,
)

_SHOWN_NAMES = 3


class NamespaceTree(BaseModel):
    """The enumeration's outcome, in the state location: never in workflow history."""

    model_config = ConfigDict(extra="forbid")

    tables: list[TableName]
    namespaces: list[list[str]] = Field(description="Walked namespaces, deepest first.")
    skipped: list[SkippedEntry]


class DropCheckpoint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    next_index: int = 0
    dropped: int = 0
    kept_total: int = 0
    kept_sample: list[SkippedEntry] = Field(default_factory=list)


def _dotted(catalog: str, levels: Identifier) -> str:
    return ".".join([catalog, *levels])


def _views(catalog: Catalog, namespace: Identifier) -> list[Identifier]:
    """Views are catalog entries a table purge must leave alone; catalogs without views say so."""
    try:
        return catalog.list_views(namespace)
    except (NotImplementedError, NoSuchNamespaceError):
        return []


def _children(catalog: Catalog, namespace: Identifier) -> list[Identifier]:
    try:
        found = catalog.list_namespaces(namespace)
    except NoSuchNamespaceError:
        return []
    # Some catalogs answer with every descendant: keep the direct children, in a stable order.
    depth = len(namespace) + 1
    return sorted(
        {tuple(child[:depth]) for child in found if len(child) >= depth and child[: depth - 1] == namespace}
    )


def _tables(catalog: Catalog, namespace: Identifier) -> list[Identifier]:
    try:
        return sorted(catalog.list_tables(namespace)) if namespace else []
    except NoSuchNamespaceError:
        return []


class NamespaceActivities(CatalogCalls):
    def __init__(
        self,
        registry: CatalogRegistry,
        state: StateStore,
        signals: ProgressSignals | None = None,
    ) -> None:
        super().__init__(registry, signals)
        self._state = state
        # The last tree read: a namespace purge reads its pages one after another. Its location
        # names the purge's run chain, so no later purge under the same id can read it.
        self._cached: tuple[str, NamespaceTree] | None = None
        self._lock = threading.Lock()

    @property
    def all(self) -> list[Any]:
        return [self.enumerate_namespace, self.read_table_page, self.drop_empty_namespaces]

    @activity.defn(name=ENUMERATE_ACTIVITY)
    def enumerate_namespace(self, step: EnumerateInput) -> EnumerationSummary:
        with self._step(ENUMERATE_ACTIVITY):
            catalog = self._catalog(step.catalog)
            root = tuple(step.namespace)
            self._check_root(catalog, step, root)
            tree = self._walk(catalog, step, root)
            chain = [step.run_chain] if step.run_chain else []
            location = self._state.uri("namespace-purges", step.purge_id, *chain, "tree.json")
            self._state.write(location, tree, compress=True)
            return EnumerationSummary(
                tree_location=location,
                tables_total=len(tree.tables),
                namespaces_total=len(tree.namespaces),
                entries_skipped=len(tree.skipped),
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

    def _walk(self, catalog: Catalog, step: EnumerateInput, root: Identifier) -> NamespaceTree:
        tables: list[TableName] = []
        namespaces: list[Identifier] = [root] if root else []
        skipped: list[SkippedEntry] = []
        pending = [root]
        while pending:
            namespace = pending.pop()
            for identifier in _tables(catalog, namespace):
                tables.append(TableName(namespace=list(identifier[:-1]), table=identifier[-1]))
            for view in _views(catalog, namespace) if namespace else []:
                skipped.append(
                    SkippedEntry(
                        kind=SkipKind.VIEW, name=_dotted(step.catalog, view), reason="not_iceberg_table"
                    )
                )
            if namespace and not step.nested:
                continue
            for child in _children(catalog, namespace):
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
        # Deepest first, so that a parent is looked at once its children are gone.
        ordered = sorted(namespaces, key=len, reverse=True)
        return NamespaceTree(tables=tables, namespaces=[list(ns) for ns in ordered], skipped=skipped)

    @staticmethod
    def _properties(catalog: Catalog, namespace: Identifier) -> dict[str, str]:
        try:
            return catalog.load_namespace_properties(namespace)
        except NoSuchNamespaceError:
            return {}

    @activity.defn(name=TABLE_PAGE_ACTIVITY)
    def read_table_page(self, step: TablePageInput) -> TablePage:
        tree = self._tree(step.tree_location)
        return TablePage(tables=tree.tables[step.offset : step.offset + step.limit])

    def _tree(self, location: str) -> NamespaceTree:
        with self._lock:
            if self._cached is not None and self._cached[0] == location:
                return self._cached[1]
        raw = self._state.read(location)
        if raw is None:
            raise ApplicationError(
                f"the namespace purge's table list {location} is gone from the state location",
                non_retryable=True,
            )
        tree = NamespaceTree.model_validate_json(raw)
        with self._lock:
            self._cached = (location, tree)
        return tree

    @activity.defn(name=DROP_NAMESPACES_ACTIVITY)
    def drop_empty_namespaces(self, step: DropNamespacesInput) -> DropNamespacesResult:
        """Deepest first; a namespace that still holds anything stays, and says what. Heartbeats
        its place, so a retry neither drops nor counts twice."""
        with self._step(DROP_NAMESPACES_ACTIVITY):
            catalog = self._catalog(step.catalog)
            tree = self._tree(step.tree_location)
            details = activity.info().heartbeat_details
            done = DropCheckpoint.model_validate(details[0]) if details else DropCheckpoint()
            for index in range(done.next_index, len(tree.namespaces)):
                namespace = tuple(tree.namespaces[index])
                kept = self._drop_if_empty(catalog, step.catalog, namespace)
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

    @staticmethod
    def _drop_if_empty(catalog: Catalog, name: str, namespace: Identifier) -> str | None:
        """None when dropped; why it stays otherwise ("" when it was no entry of its own)."""
        held = [".".join(found) for found in _tables(catalog, namespace) + _views(catalog, namespace)]
        held += [f"namespace {'.'.join(child)}" for child in _children(catalog, namespace)]
        if held:
            shown = ", ".join(held[:_SHOWN_NAMES]) + (
                f" and {len(held) - _SHOWN_NAMES} more" if len(held) > _SHOWN_NAMES else ""
            )
            return f"still holds {shown}"
        try:
            catalog.drop_namespace(namespace)
        except NoSuchNamespaceError:
            return ""
        except NamespaceNotEmptyError:
            return f"the catalog {name!r} says it is not empty"
        return None
