"""The run's current details in the Temporal Web UI: where the purge stands, in markdown."""

from __future__ import annotations

from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeStatus

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def size_text(count: int) -> str:
    value, unit = float(count), 0
    while value >= 1024 and unit < len(_UNITS) - 1:
        value, unit = value / 1024, unit + 1
    return f"{count:,} B" if unit == 0 else f"{value:,.1f} {_UNITS[unit]}"


def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


def details_markdown(status: PurgeStatus) -> str:
    total = status.counts.total()
    rate = status.rate_files_per_second
    budget = status.bucket_requests_per_second
    # Paused while planning: the pause takes hold when deleting would begin.
    pending = " · pause requested" if status.paused and status.state is not PurgeState.PAUSED else ""
    table = ".".join([status.catalog, *status.namespace, status.table])
    # A header row of its own: the Web UI styles it apart from the rows below.
    lines = [
        f"**{status.state}**{pending} · purge `{table}`",
        "",
        "| progress | now |",
        "|:---|:---|",
        f"| files | {status.files_done:,} / {status.files_total:,} |",
        f"| deleted | {total.deleted:,} ({size_text(total.bytes_deleted)}) |",
        f"| failed | {status.failures_total:,} |",
        f"| chunks | {status.chunks_done} / {status.chunks_total} |",
        f"| rate | {f'{rate:,.0f} files/s' if rate is not None else 'not yet known'} |",
        f"| ETA | {duration_text(status.eta_seconds)} |",
        f"| budget | {f'{budget:,.0f} requests/s per bucket' if budget else 'unlimited'} |",
    ]
    if status.scheduled_for:
        lines.append(
            f"| scheduled for | {status.scheduled_for:%Y-%m-%d %H:%M:%S} UTC (undrop or expedite before) |"
        )
    if status.dropped_at:
        lines.append(f"| dropped | catalog entry dropped {status.dropped_at:%Y-%m-%d %H:%M:%S} UTC |")
    if status.held_as:
        lines.append(f"| held | as {status.held_as[:200]} until its catalog's drop |")
    if status.undropped_note:
        lines.append(f"| undropped | {status.undropped_note[:200]} |")
    for guard in status.guards:
        verdict = "passed" if guard.passed else "REFUSED"
        shown = verdict if guard.applied else "not applied"
        lines.append(f"| guard {guard.guard.value} | {shown}: {guard.detail[:200]} |")
    if status.sweep:
        lines.append(f"| sweep | {status.sweep.detail[:200]} |")
    if status.unreadable_files:
        lines.append(
            f"| unreadable | {status.unreadable_files:,} (absent or corrupt, listed in the report) |"
        )
    if status.retrying:
        step = status.retrying
        lines.append(f"| retrying | {step.step}, attempt {step.attempt}: {(step.last_error or '')[:200]} |")
    if status.last_error:
        lines.append(f"| last error | {status.last_error[:200]} |")
    return "\n".join(lines)
