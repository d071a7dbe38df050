"""`purge tables` of a namespace purge that may still be running, to its last page, as the API
answers it (NamespaceTablePages, pages of 50): each page's seconds. For a purge too long to wait
for, such as bench.namespace_purge at 10^5 tables, measured while it runs.

The worker's settings say where everything is: run it with the worker's ICEPURGE_* environment
(Temporal address, codec keys, task queue, state location and its IO properties).

    .venv/bin/python -m bench.live_table_pages [--purge-id ID]

Without --purge-id, the one running namespace purge.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.namespace_table_pages import NamespaceTablePages
from icepurge.api.server.report_pages import ReportReader
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.connection.settings import TemporalSettings
from icepurge.contract.names import NAMESPACE_WORKFLOW_TYPE

PAGE_SIZE = 50


async def _pages(purge_id: str | None) -> None:
    settings = TemporalSettings()
    client = await connect(settings)
    purges = PurgeClient(client, os.environ.get("ICEPURGE_TASK_QUEUE", settings.task_queue))
    if purge_id is None:
        query = f"ExecutionStatus='Running' AND WorkflowType='{NAMESPACE_WORKFLOW_TYPE}'"
        async for execution in client.list_workflows(query):
            purge_id = execution.id
            break
        else:
            raise SystemExit("no namespace purge is running: name one with --purge-id")
    status = await purges.namespaces.status(purge_id)
    print(f"purge {purge_id}: {status.tables_done:,} of {status.tables_total:,} tables done", flush=True)
    properties = json.loads(os.environ.get("ICEPURGE_STATE_IO_PROPERTIES", "{}"))
    reader = ReportReader(os.environ["ICEPURGE_STATE_LOCATION"], properties)
    listed, seconds = await timed_pages(NamespaceTablePages(purges, reader, purge_id, None))
    print(f"purge tables: {listed:,} listed in {pages_line(seconds)}")


async def timed_pages(pages: NamespaceTablePages) -> tuple[int, list[float]]:
    """The tables listed, and each page's seconds in the order they came."""
    seconds: list[float] = []
    listed = 0
    token: str | None = None
    while True:
        began = time.perf_counter()
        page = await pages.page(PAGE_SIZE, token)
        seconds.append(time.perf_counter() - began)
        listed += len(page.items)
        if (token := page.next_page_token) is None:
            return listed, seconds


def pages_line(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    return (
        f"{len(seconds)} pages of {PAGE_SIZE}; a page p50 {ordered[len(ordered) // 2]:.3f} s, p99 "
        f"{ordered[int(len(ordered) * 0.99)]:.3f} s, slowest {ordered[-1]:.3f} s; first {seconds[0]:.3f} s, "
        f"last {seconds[-1]:.3f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--purge-id", default=None, help="the namespace purge (unset: the one running)")
    asyncio.run(_pages(parser.parse_args().purge_id))


if __name__ == "__main__":
    run_then_exit(main)
