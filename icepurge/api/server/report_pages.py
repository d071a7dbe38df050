"""A purge's report object read a page at a time: the parser streams through the object, so a
report of millions of entries never sits in memory whole."""

from __future__ import annotations

import asyncio
import gzip
from itertools import islice
from typing import Any

import ijson
from pyiceberg.io import load_file_io

from icepurge.api.clients.errors import PurgeReportUnavailableError, PurgeServiceUnavailableError
from icepurge.contract.batch_steps import BatchedTables, batched_tables_folder, table_record_path
from icepurge.contract.namespace_status import NamespacePurgeStatus, SkippedEntry, SkippedPage
from icepurge.contract.reasons import typed_reason
from icepurge.contract.report_pages import ReportEntry, ReportPage
from icepurge.contract.report_sections import ReportSection
from icepurge.contract.status import PurgeReport, PurgeStatus
from icepurge.contract.table_list import (
    SkippedEntriesPage,
    TableListIndex,
    is_legacy,
    pages_over,
    skipped_page_location,
)
from icepurge.stores.registry import open_store
from icepurge.stores.store import StoreContext

# RFC 1952's first two bytes: the state store writes table lists gzip under a plain name.
_GZIP_MAGIC = b"\x1f\x8b"


def _entry(item: Any) -> ReportEntry:
    if isinstance(item, str):
        return ReportEntry(path=item)
    detail = item.get("error") or item.get("reason")
    return ReportEntry(path=item["path"], category=item.get("category"), detail=detail)


class ReportReader:
    """Reads report objects from the state location the workers write them to."""

    def __init__(self, state_location: str | None, io_properties: dict[str, str]) -> None:
        self._location = state_location.rstrip("/") + "/" if state_location else None
        self._properties = io_properties

    async def page(self, status: PurgeStatus, section: ReportSection, offset: int, limit: int) -> ReportPage:
        location = status.report_location
        if location is None:
            raise PurgeReportUnavailableError(_why_no_report(status))
        self._check_inside(status.purge_id, location)
        entries, following = await asyncio.to_thread(self._read, location, section, offset, limit)
        return ReportPage(
            purge_id=status.purge_id,
            state=status.state.value,
            report_location=location,
            section=section,
            entries=entries,
            next_offset=following,
        )

    async def skipped(self, status: NamespacePurgeStatus, offset: int, limit: int) -> SkippedPage:
        """The entries a namespace purge's enumeration left alone, read from its table list."""
        location = status.tree_location
        if location is None:
            raise PurgeReportUnavailableError(
                f"namespace purge {status.purge_id} has no table list yet: it is {status.state.value}"
            )
        self._check_inside(status.purge_id, location)
        entries, following = await asyncio.to_thread(self._read_skipped, location, offset, limit)
        return SkippedPage(
            purge_id=status.purge_id, state=status.state.value, entries=entries, next_offset=following
        )

    def _check_inside(self, purge_id: str, location: str) -> None:
        if self._location is None:
            raise PurgeServiceUnavailableError(
                "this process can't read reports: set ICEPURGE_STATE_LOCATION and "
                "ICEPURGE_STATE_IO_PROPERTIES as on the workers"
            )
        if not location.startswith(self._location):
            raise PurgeReportUnavailableError(
                f"purge {purge_id}'s report is outside this process's state location"
            )

    async def table_record(self, purge_id: str) -> PurgeReport | None:
        """A table purged in a namespace purge's batch has no workflow: its record stands in."""
        if self._location is None:
            return None
        return await asyncio.to_thread(self._read_record, self._location + table_record_path(purge_id))

    async def batched_tables(
        self, parent_id: str, token: str | None, batches: int
    ) -> tuple[list[PurgeReport], str | None]:
        """The records of up to `batches` of the namespace purge `parent_id`'s batches, in the
        order of their first tables' ids, and the token for the next ones (None: no more)."""
        if self._location is None:
            return [], None
        return await asyncio.to_thread(self._read_batches, self._location, parent_id, token, batches)

    def _read_batches(
        self, location: str, parent_id: str, token: str | None, batches: int
    ) -> tuple[list[PurgeReport], str | None]:
        folder = location + batched_tables_folder(parent_id)
        store = open_store(folder, StoreContext(self._properties, connections=4))
        page = store.list_page(folder, token, batches, flat=True)
        records = []
        for listed in page.objects:
            raw = self._read_raw(listed.uri)
            for purge_id in BatchedTables.model_validate_json(raw).purge_ids if raw else []:
                record = self._read_record(location + table_record_path(purge_id))
                if record is not None:
                    records.append(record)
        return records, page.next_token

    def _read_raw(self, location: str) -> bytes | None:
        try:
            with load_file_io(self._properties, location).new_input(location).open() as stream:
                return stream.read()
        except FileNotFoundError:
            return None

    def _read_record(self, location: str) -> PurgeReport | None:
        raw = self._read_raw(location)
        return PurgeReport.model_validate_json(raw) if raw is not None else None

    def _read(
        self, location: str, section: ReportSection, offset: int, limit: int
    ) -> tuple[list[ReportEntry], int | None]:
        stream_source = load_file_io(self._properties, location).new_input(location)
        try:
            with stream_source.open() as stream:
                entries = ijson.items(stream, f"{section.value}.item")
                window = list(islice(entries, offset, offset + limit + 1))
        except FileNotFoundError:
            raise PurgeReportUnavailableError(f"the report object {location} is gone") from None
        following = offset + limit if len(window) > limit else None
        return [_entry(item) for item in window[:limit]], following

    def _read_skipped(self, location: str, offset: int, limit: int) -> tuple[list[SkippedEntry], int | None]:
        if is_legacy(location):
            return self._read_legacy_skipped(location, offset, limit)
        index = TableListIndex.model_validate_json(self._read_list_object(location))
        end = min(offset + limit, index.skipped_total)
        entries: list[SkippedEntry] = []
        for page in pages_over(offset, end - offset, index.page_entries) if end > offset else ():
            raw = self._read_list_object(skipped_page_location(location, page))
            start = page * index.page_entries
            entries += SkippedEntriesPage.model_validate_json(raw).skipped[
                max(offset - start, 0) : end - start
            ]
        return entries, end if end < index.skipped_total else None

    def _read_list_object(self, location: str) -> bytes:
        raw = self._read_raw(location)
        if raw is None:
            raise PurgeReportUnavailableError(f"the table list object {location} is gone")
        return gzip.decompress(raw) if raw[:2] == _GZIP_MAGIC else raw

    def _read_legacy_skipped(
        self, location: str, offset: int, limit: int
    ) -> tuple[list[SkippedEntry], int | None]:
        """A list written before pages: one object, streamed through to the page asked."""
        try:
            with load_file_io(self._properties, location).new_input(location).open() as raw:
                head = raw.read(2)
                raw.seek(0)
                stream = gzip.GzipFile(fileobj=raw) if head == _GZIP_MAGIC else raw
                entries = ijson.items(stream, "skipped.item")
                window = list(islice(entries, offset, offset + limit + 1))
        except FileNotFoundError:
            raise PurgeReportUnavailableError(f"the table list {location} is gone") from None
        following = offset + limit if len(window) > limit else None
        return [SkippedEntry.model_validate(item) for item in window[:limit]], following


def _why_no_report(status: PurgeStatus) -> str:
    if status.error_type or status.last_error:
        reason = typed_reason(status.last_error or "no message", status.error_type)
        return (
            f"purge {status.purge_id} has no report: it ended {status.state.value} before writing one "
            f"({reason})"
        )
    return f"purge {status.purge_id} has no report yet: it is {status.state.value}; reports are written last"
