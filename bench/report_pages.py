"""Reading a big report a page at a time: seconds and peak memory of one page of 1,000 entries
at the start, middle and end of a report of N would-delete entries, against loading the whole
object as the finalizer's model (the baseline). Each measurement runs in a process of its own,
so each peak RSS is that reading's alone. The report lives in a file:// state location.

    .venv/bin/python -m bench.report_pages --entries 1000000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from icepurge.activities.finalize.finalizer import PurgeReportObject
from icepurge.api.server.report_pages import ReportReader
from icepurge.connection.exit_now import run_then_exit
from icepurge.contract.counts import FileCounts
from icepurge.contract.report_sections import ReportSection
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus

PAGE = 1000


def _write(directory: Path, entries: int) -> str:
    paths = [f"s3://warehouse/lake/big/data/part-{index:08d}-9f2c3a.parquet" for index in range(entries)]
    report = PurgeReportObject(
        purge_id="bench",
        metadata_location="s3://warehouse/m.json",
        dry_run=True,
        counts=FileCounts(),
        would_delete=paths,
    )
    location = directory / "report.json"
    location.write_text(report.model_dump_json())
    return f"file://{location}"


def _status(location: str) -> PurgeStatus:
    return PurgeStatus(
        purge_id="bench",
        state=PurgeState.SUCCEEDED,
        catalog="c",
        namespace=["n"],
        table="t",
        requested_by="bench",
        dry_run=True,
        report_location=location,
    )


def _measure(mode: str, location: str, offset: int) -> None:
    """In the child: one reading, then its seconds and peak RSS as JSON. PyArrow's file system
    is imported first, so neither side is charged with imports."""
    import pyiceberg.io.pyarrow  # noqa: F401

    started = time.perf_counter()
    if mode == "whole":
        with open(location.removeprefix("file://"), "rb") as source:
            report = PurgeReportObject.model_validate_json(source.read())
        entries = report.would_delete[offset : offset + PAGE]
    else:
        reader = ReportReader(str(Path(location.removeprefix("file://")).parent), {})
        reader_location = location.removeprefix("file://")
        page = asyncio.run(reader.page(_status(reader_location), ReportSection.WOULD_DELETE, offset, PAGE))
        entries = [entry.path for entry in page.entries]
    seconds = time.perf_counter() - started
    peak_mib = _high_water_mib()
    print(
        json.dumps({"seconds": seconds, "peak_mib": peak_mib, "entries": len(entries), "first": entries[0]})
    )


def _high_water_mib() -> float:
    """This process's own peak RSS (ru_maxrss would carry the parent's peak across exec)."""
    status = Path("/proc/self/status").read_text()
    kib = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(kib) / 1024


def _run(mode: str, location: str, offset: int) -> dict[str, float]:
    answer = subprocess.run(
        [sys.executable, "-m", "bench.report_pages", "--child", mode, location, str(offset)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(answer.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--child", nargs=3, metavar=("MODE", "LOCATION", "OFFSET"))
    arguments = parser.parse_args()
    if arguments.child:
        mode, location, offset = arguments.child
        _measure(mode, location, int(offset))
        return
    with tempfile.TemporaryDirectory() as directory:
        location = _write(Path(directory), arguments.entries)
        size_mib = Path(location.removeprefix("file://")).stat().st_size / 2**20
        print(f"report of {arguments.entries:,} would-delete entries, {size_mib:,.0f} MiB, pages of {PAGE:,}")
        print(f"{'reading':<32} {'offset':>10} {'seconds':>8} {'peak RSS MiB':>13}")
        for offset in (0, arguments.entries // 2, arguments.entries - PAGE):
            for mode, label in (
                ("whole", "baseline: load the whole object"),
                ("paged", "ReportReader.page (ijson)"),
            ):
                result = _run(mode, location, offset)
                print(f"{label:<32} {offset:>10,} {result['seconds']:>8.2f} {result['peak_mib']:>13.0f}")


if __name__ == "__main__":
    run_then_exit(main)
