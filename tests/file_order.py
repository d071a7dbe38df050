"""The order the stack tier's test files start in: longest first, so that its two processes
finish together. xdist's own order (most tests first) started the files of one long test last:
one process ran the chaos tier alone for minutes after the other had finished.

A file's seconds were measured on this project's machine (`--durations=0`, setup and teardown
included) and are kept in file_seconds.json; a file not listed counts as the median of those that
are. After tests move or grow, measure again:

    pytest -n 2 --dist loadfile --no-loadscope-reorder -m "not fast and not engines" \\
        --durations=0 > durations.txt
    python -m tests.file_order durations.txt
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

SECONDS_FILE = Path(__file__).with_name("file_seconds.json")
# One line of pytest's durations report: "12.34s call     tests/x/test_y.py::test_z[param]".
_DURATION = re.compile(r"^\s*(?P<seconds>[0-9.]+)s\s+(?:setup|call|teardown)\s+(?P<file>[^:\s]+)::")


class _Item(Protocol):
    @property
    def nodeid(self) -> str: ...


Item = TypeVar("Item", bound=_Item)


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def longest_first(items: Sequence[Item], seconds: dict[str, float] | None = None) -> list[Item]:
    """The items, their files longest first; within a file, in their own order."""
    known = measured_seconds() if seconds is None else seconds
    unknown = statistics.median(known.values())
    return sorted(items, key=lambda item: -known.get(_file_of(item.nodeid), unknown))


def measured_seconds() -> dict[str, float]:
    seconds: dict[str, float] = json.loads(SECONDS_FILE.read_text())
    return seconds


def file_seconds(report: str) -> dict[str, float]:
    """Seconds a file took, from pytest's durations report, longest first."""
    totals: dict[str, float] = defaultdict(float)
    for line in report.splitlines():
        match = _DURATION.match(line)
        if match:
            totals[match["file"]] += float(match["seconds"])
    return {file: round(total, 1) for file, total in sorted(totals.items(), key=lambda kv: -kv[1])}


if __name__ == "__main__":
    measured = file_seconds(Path(sys.argv[1]).read_text())
    SECONDS_FILE.write_text(json.dumps(measured, indent=1) + "\n")
    print(f"{len(measured)} files, {sum(measured.values()):,.0f} s in all -> {SECONDS_FILE}")
