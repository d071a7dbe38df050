"""A namespace purge's table list as pages: written as the walk goes, read a page at a time (only
the pages a read needs), its skipped entries paged over HTTP the same way; lists written before
pages are read as they were."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from icepurge.activities.namespace.table_list_writer import TableListWriter
from icepurge.activities.namespace.table_lists import NamespaceTree, TableLists
from icepurge.api.server.report_pages import ReportReader
from icepurge.contract.namespace_status import (
    NamespacePurgeState,
    NamespacePurgeStatus,
    SkipKind,
    SkippedEntry,
)
from icepurge.contract.namespace_steps import TableName
from icepurge.contract.table_list import NamespaceSpan, TablesPage, tables_page_location
from icepurge.state.state_store import StateStore

NAMES = [TableName(namespace=["ns", f"n{index // 4}"], table=f"t{index}") for index in range(11)]
SKIPPED = [
    SkippedEntry(kind=SkipKind.TABLE, name=f"lake.ns.u{index}", reason="unselected: x") for index in range(5)
]


class CountingState(StateStore):
    def __init__(self, location: str) -> None:
        super().__init__(location, {})
        self.reads: list[str] = []

    def read(self, uri: str) -> bytes | None:
        self.reads.append(uri.rsplit("/", 2)[-2] + "/" + uri.rsplit("/", 1)[-1])
        return super().read(uri)


def _written(state: StateStore) -> str:
    location = state.uri("namespace-purges", "p", "run", "table-list.json")
    writer = TableListWriter(state, location, page_entries=3)
    for name in NAMES:
        writer.table(name)
    for entry in SKIPPED:
        writer.skipped(entry)
    writer.finish([NamespaceSpan(levels=["ns", "n1"], first=4, end=8)])
    assert (writer.tables_total, writer.skipped_total) == (11, 5)
    return location


def test_a_list_is_written_in_pages_and_a_read_takes_only_the_pages_it_needs(tmp_path: Path) -> None:
    state = CountingState(f"file://{tmp_path}")
    location = _written(state)
    pages = sorted((tmp_path / "namespace-purges" / "p" / "run" / "tables").iterdir())
    assert [page.name for page in pages] == [f"{page:08d}.json" for page in range(4)]
    for page in range(4):
        raw = state.read(tables_page_location(location, page))
        assert raw is not None and len(TablesPage.model_validate_json(raw).tables) <= 3
    lists = TableLists(state)
    state.reads.clear()
    assert lists.names(location, 7, 2) == NAMES[7:9]
    assert state.reads == ["run/table-list.json", "tables/00000002.json"]
    for offset in range(12):
        for limit in (1, 2, 3, 5, 100):
            assert lists.names(location, offset, limit) == NAMES[offset : offset + limit], (offset, limit)
    assert lists.index(location).namespaces == [NamespaceSpan(levels=["ns", "n1"], first=4, end=8)]


def test_a_list_written_before_pages_is_read_as_it_was(tmp_path: Path) -> None:
    state = StateStore(f"file://{tmp_path}", {})
    location = state.uri("namespace-purges", "p", "tree.json")
    namespaces = [["ns", "n2"], ["ns", "n1"], ["ns", "n0"], ["ns", "empty"]]
    state.write(location, NamespaceTree(tables=NAMES, namespaces=namespaces, skipped=SKIPPED), compress=True)
    lists = TableLists(state)
    assert lists.names(location, 2, 5) == NAMES[2:7]
    index = lists.index(location)
    assert index.tables_total == 11 and index.skipped_total == 5
    spans = {tuple(span.levels): (span.first, span.end) for span in index.namespaces}
    assert spans == {
        ("ns", "n2"): (8, 11),
        ("ns", "n1"): (4, 8),
        ("ns", "n0"): (0, 4),
        ("ns", "empty"): (0, 0),
    }


async def test_skipped_entries_are_paged_from_either_kind_of_list(tmp_path: Path) -> None:
    state = StateStore(f"file://{tmp_path}", {})
    paged = _written(state)
    legacy = state.uri("namespace-purges", "old", "tree.json")
    state.write(legacy, NamespaceTree(tables=NAMES, namespaces=[], skipped=SKIPPED), compress=True)
    reader = ReportReader(f"file://{tmp_path}", {})
    for location in (paged, legacy):
        status = NamespacePurgeStatus(
            purge_id="p",
            state=NamespacePurgeState.SUCCEEDED,
            catalog="lake",
            namespace=["ns"],
            recursive=True,
            requested_by="x",
            max_concurrent_tables=1,
            tree_location=location,
            started_at=datetime.now(UTC),
        )
        seen: list[SkippedEntry] = []
        offset: int | None = 0
        while offset is not None:
            page = await reader.skipped(status, offset, 2)
            assert len(page.entries) <= 2
            seen += page.entries
            offset = page.next_offset
        assert seen == SKIPPED, location
