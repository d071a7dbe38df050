"""What a running process's resident memory is made of, read from /proc: the main heap (brk),
anonymous mappings (glibc's thread arenas, Python's object arenas, thread stacks), mapped files,
and its threads by name. For a worker whose RSS grows where tracemalloc sees no Python object
grow (bench.memory_growth).

    .venv/bin/python -m bench.process_memory PID [PID ...]"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from icepurge.connection.exit_now import run_then_exit

_MAPPING = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$")
KIB_PER_MIB = 1024


def _kind(name: str) -> str:
    if not name:
        return "anonymous"
    if name.startswith("/"):
        return "files"
    return name.strip("[]").split(":")[0]


def resident_by_kind(pid: int) -> Counter[str]:
    """KiB resident, by kind of mapping."""
    resident: Counter[str] = Counter()
    kind = "anonymous"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        mapping = _MAPPING.match(line)
        if mapping:
            kind = _kind(mapping[3].strip())
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
