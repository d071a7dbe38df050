"""Where a step's wall time went inside its activity, from a py-spy profile of the worker taken
with idle samples (`py-spy record --idle --threads --format raw`): the samples of the thread that
runs the step (its stack holds the `--step` function), each counted in the first phase whose
function its stack holds, with the innermost functions that took most of each phase. Samples
taken while no purge ran (the bench restoring the table) hold no step and are left out.

    py-spy record -p WORKER_PID --idle --threads -r 500 --format raw -o step.raw
    .venv/bin/python -m bench.step_phases step.raw --rate 500 --step plan_and_finish_small \\
        --phase planning=plan_small_at_once --phase guard=_guard --phase chunks=_chunks \\
        --phase finalize=finalize

Without --step every sample counts: a CPU profile (`--gil`, bench.namespace_purge --profile)
read as where each table's CPU went, --purges being the tables. A phase may be named by several
functions (`--phase deletes=_delete_batch --phase deletes=delete_chunk_from`).
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from icepurge.connection.exit_now import run_then_exit

OTHER = "other (between the phases)"
_TOP = 6


@dataclass
class Phases:
    names: list[str]
    step: bool
    samples: Counter[str] = field(default_factory=Counter)
    leaves: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))


def _function(frame: str) -> str:
    """`name (path/to/file.py:12)` as `name (file.py)`."""
    name, _, place = frame.partition(" (")
    return f"{name} ({Path(place.rsplit(':', 1)[0]).name})" if place else name


def _holds(frames: list[str], function: str) -> bool:
    """py-spy names a method with its class (`ExpressFinish._chunks`)."""
    return any(frame == function or frame.endswith(f".{function}") for frame in frames)


def read(lines: list[str], step: str | None, markers: list[tuple[str, str]]) -> Phases:
    phases = Phases([*dict.fromkeys(name for name, _ in markers), OTHER], step is not None)
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [frame.partition(" (")[0] for frame in stack.split(";")]
        if step is not None and not _holds(frames, step):
            continue
        phase = next((name for name, marker in markers if _holds(frames, marker)), OTHER)
        phases.samples[phase] += int(count)
        phases.leaves[phase][_function(stack.split(";")[-1])] += int(count)
    return phases


def table(phases: Phases, rate: float, purges: int, unit: str = "s") -> str:
    """`unit` "ms" gives milliseconds per purge: a small table's CPU."""
    scale = 1000 if unit == "ms" else 1
    total = sum(phases.samples.values())
    rows = [
        f"| phase | {unit} per purge | share | where (innermost function, share of the phase) |",
        "| --- | ---: | ---: | --- |",
    ]
    for name in phases.names:
        samples = phases.samples[name]
        if not samples:
            continue
        top = ", ".join(
            f"{leaf} {count / samples:.0%}" for leaf, count in phases.leaves[name].most_common(_TOP)
        )
        rows.append(f"| {name} | {samples * scale / rate / purges:.3f} | {samples / total:.0%} | {top} |")
    whole = "the step, in all" if phases.step else "in all"
    rows.append(f"| {whole} | {total * scale / rate / purges:.3f} | 100% | |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("raw", type=Path)
    parser.add_argument("--rate", type=float, required=True, help="py-spy's samples a second (-r)")
    parser.add_argument("--step", default=None, help="the activity's function (default: every sample)")
    parser.add_argument("--purges", type=int, default=1, help="purges profiled, to give seconds per purge")
    parser.add_argument("--unit", choices=["s", "ms"], default="s", help="of the time per purge")
    parser.add_argument("--phase", action="append", default=[], help="NAME=FUNCTION, outermost first")
    args = parser.parse_args()
    markers = [(name, marker) for name, _, marker in (phase.partition("=") for phase in args.phase)]
    lines = args.raw.read_text().splitlines()
    print(table(read(lines, args.step, markers), args.rate, args.purges, args.unit))


if __name__ == "__main__":
    run_then_exit(main)
