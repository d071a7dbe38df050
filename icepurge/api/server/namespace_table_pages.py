"""A namespace purge's tables a page at a time: first the table purge workflows it started (from
visibility), then the tables its batches purged, which have no workflow (from the records the
batches keep in the state location). A page of batched tables holds whole batches: at least as
many tables as asked while more are left, and up to a batch's size more."""

from __future__ import annotations

import math
from dataclasses import dataclass

from icepurge.api.clients.listing import PurgePage, PurgeSummary, summary_of_record
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.report_pages import ReportReader
from icepurge.contract.batch_steps import MAX_BATCH_TABLES

# A page token past the workflows: the state location's listing token follows it (or nothing, at
# the first batch).
BATCHED = "batched:"


@dataclass(frozen=True)
class NamespaceTablePages:
    client: PurgeClient
    reports: ReportReader
    purge_id: str
    catalogs: frozenset[str] | None

    async def page(self, size: int, token: str | None) -> PurgePage:
        if token is not None and token.startswith(BATCHED):
            return await self._batched(token.removeprefix(BATCHED) or None, size)
        workflows = await self.client.namespace_tables(self.purge_id, size, token, self.catalogs)
        if workflows.next_page_token is not None:
            return workflows
        batched = await self._batched(None, size - len(workflows.items))
        return PurgePage(items=workflows.items + batched.items, next_page_token=batched.next_page_token)

    async def _batched(self, token: str | None, room: int) -> PurgePage:
        if room <= 0:
            # With no room left, one batch is read anyway: whether any follow decides the next token.
            records, _ = await self.reports.batched_tables(self.purge_id, token, 1)
            return PurgePage(items=[], next_page_token=BATCHED + (token or "") if records else None)
        # Records of an earlier run of the same request stay until overwritten; the latest run's
        # tables are those started since it began, as for the workflows.
        began = (await self.client.namespaces.status(self.purge_id)).started_at
        items: list[PurgeSummary] = []
        following = token
        while True:
            # As many batches as the room needs were they full; more while smaller ones leave room.
            batches = math.ceil((room - len(items)) / MAX_BATCH_TABLES)
            records, following = await self.reports.batched_tables(self.purge_id, following, batches)
            items += [
                summary_of_record(record.status)
                for record in records
                if (began is None or (record.status.started_at and record.status.started_at >= began))
                and (self.catalogs is None or record.status.catalog in self.catalogs)
            ]
            if following is None or len(items) >= room:
                return PurgePage(items=items, next_page_token=BATCHED + following if following else None)
