"""What a traced worker (bench.traced_worker) kept between two of its snapshots: the allocation
sites whose live memory grew most, each with the frames that lead to it inside icepurge.

    .venv/bin/python -m bench.memory_growth /tmp/trace/000.snapshot /tmp/trace/009.snapshot [--top 25]"""

from __future__ import annotations

import argparse
import tracemalloc
from pathlib import Path

from icepurge.connection.exit_now import run_then_exit

MIB = 1024 * 1024
# Frames of the standard library and the SDKs say little about who keeps the memory; the first
# frames of this repository do.
OWN_FRAMES = ("/icepurge/", "/bench/")


def growth_lines(first: Path, last: Path, top: int) -> list[str]:
    before, after = tracemalloc.Snapshot.load(str(first)), tracemalloc.Snapshot.load(str(last))
    total_before = sum(stat.size for stat in before.statistics("filename"))
    total_after = sum(stat.size for stat in after.statistics("filename"))
    lines = [f"traced: {total_before / MIB:,.1f} -> {total_after / MIB:,.1f} MiB"]
    for stat in after.compare_to(before, "traceback")[:top]:
        own = [frame for frame in stat.traceback if any(part in frame.filename for part in OWN_FRAMES)]
        where = stat.traceback[-1]
        lines.append(
            f"{stat.size_diff / MIB:+8.2f} MiB {stat.count_diff:+9,} blocks  {where.filename}:{where.lineno}"
        )
        lines += [f"      via {frame.filename}:{frame.lineno}" for frame in own[-3:]]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("first", type=Path)
    parser.add_argument("last", type=Path)
    parser.add_argument("--top", type=int, default=25)
    arguments = parser.parse_args()
    print("\n".join(growth_lines(arguments.first, arguments.last, arguments.top)))


if __name__ == "__main__":
    run_then_exit(main)
