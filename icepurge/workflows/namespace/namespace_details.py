"""A namespace purge's current details in the Temporal Web UI, in markdown."""

from __future__ import annotations

from icepurge.contract.namespace_status import NamespacePurgeStatus
from icepurge.contract.reasons import shortened
from icepurge.workflows.shared.details import duration_text, size_text


def namespace_details_markdown(status: NamespacePurgeStatus) -> str:
    files = status.files
    rate = status.rate_tables_per_minute
    target = (
        ".".join([status.catalog, *status.namespace]) if status.namespace else f"catalog {status.catalog}"
    )
    mode = " (recursive)" if status.recursive else ""
    lines = [
        f"**{status.state}** · namespace purge `{target}`{mode}{' · dry run' if status.dry_run else ''}",
        "",
        "| progress | now |",
        "|:---|:---|",
        f"| tables | {status.tables_finished:,} / {status.tables_total:,} finished |",
        f"| tables done | {status.tables_done:,} |",
        f"| tables failed | {status.tables_failed:,} |",
        f"| tables skipped | {status.tables_skipped:,} |",
        f"| tables running | {status.tables_running:,} (window: {status.max_concurrent_tables} units) |",
        f"| files | {files.done:,} / {files.planned:,} |",
        f"| deleted | {files.deleted:,} ({size_text(files.bytes_deleted)}) |",
        f"| files failed | {files.failed:,} |",
        f"| namespaces {'it would drop' if status.dry_run else 'dropped'} | "
        f"{status.namespaces_dropped:,} of {status.namespaces_total:,} |",
        f"| entries left alone | {status.entries_skipped:,} |",
        f"| rate | {f'{rate:,.1f} tables/min' if rate is not None else 'not yet known'} |",
        f"| ETA | {duration_text(status.eta_seconds)} |",
    ]
    for failure in status.failure_sample[:5]:
        error = shortened(failure.error, 160)
        lines.append(f"| failed table | {failure.table}: {failure.error_type or 'Error'}: {error} |")
    if status.last_error:
        lines.append(f"| last error | {shortened(status.last_error, 200)} |")
    return "\n".join(lines)
