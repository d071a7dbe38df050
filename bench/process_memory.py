"""What a running process's resident memory is made of, read from /proc: the main heap (brk),
anonymous mappings told apart by size (Python's object arenas, thread stacks, malloc's thread arenas
and large blocks), mapped files, and its threads by name. For a worker whose RSS grows where
tracemalloc sees no Python object grow (bench.memory_growth).

    .venv/bin/python -m bench.process_memory PID [PID ...]"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from icepurge.connection.exit_now import run_then_exit

_MAPPING = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$")
KIB_PER_MIB = 1024


# Anonymous mappings told apart by size: CPython's object allocator maps arenas of 1 MiB, and a
# thread's stack is 8 MiB (ulimit -s); the rest are malloc's thread arenas and large blocks (glibc,
# and the Rust libraries, whose allocations go to the same malloc).
_SIZES_KIB = {1024: "python arenas", 8192: "thread stacks"}


def _kind(name: str, size_kib: int) -> str:
    if not name:
        return _SIZES_KIB.get(size_kib, "malloc arenas and large blocks")
    if name.startswith("/"):
        return "files"
    return name.strip("[]").split(":")[0]


def resident_by_kind(pid: int) -> Counter[str]:
    """KiB resident, by kind of mapping."""
    resident: Counter[str] = Counter()
    kind = "files"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        mapping = _MAPPING.match(line)
        if mapping:
            kind = _kind(mapping[3].strip(), (int(mapping[2], 16) - int(mapping[1], 16)) // 1024)
        elif line.startswith("Rss:"):
            resident[kind] += int(line.split()[1])
    return resident


def threads_by_name(pid: int) -> Counter[str]:
    names: Counter[str] = Counter()
    for task in Path(f"/proc/{pid}/task").iterdir():
        # Numbered threads of one pool are one name: "tokio-rt-worker", not each of them.
        names[(task / "comm").read_text().strip().rstrip("0123456789")] += 1
    return names


def memory_line(pid: int) -> str:
    resident = resident_by_kind(pid)
    kinds = ", ".join(
        f"{kind} {kib / KIB_PER_MIB:,.0f}" for kind, kib in resident.most_common() if kib >= KIB_PER_MIB
    )
    threads = threads_by_name(pid)
    named = ", ".join(f"{name} {count}" for name, count in threads.most_common())
    return (
        f"pid {pid}: RSS {sum(resident.values()) / KIB_PER_MIB:,.0f} MiB ({kinds}); "
        f"{sum(threads.values())} threads ({named})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pids", type=int, nargs="+")
    for pid in parser.parse_args().pids:
        print(memory_line(pid))


if __name__ == "__main__":
    run_then_exit(main)
