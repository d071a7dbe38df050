"""The records a namespace purge's batches keep for their tables, read straight from the state
location, independently of the API that serves them."""

from __future__ import annotations

from icepurge.contract.batch_steps import TABLE_RECORDS_FOLDER
from icepurge.contract.status import PurgeReport
from tests.store import S3Store


def all_batch_records(s3: S3Store, state_location: str, parent_id: str) -> list[PurgeReport]:
    """Every record whose table purge the namespace purge `parent_id` made, in any of its runs."""
    folder = f"{state_location.rstrip('/')}/{TABLE_RECORDS_FOLDER}"
    reports = [PurgeReport.model_validate_json(s3.read(uri)) for uri in s3.list(folder)]
    return [report for report in reports if (report.status.request_id or "").startswith(parent_id)]


def batch_records(s3: S3Store, state_location: str, parent_id: str) -> dict[str, PurgeReport]:
    """By table name: every record whose table purge the namespace purge `parent_id` made."""
    return {report.status.table: report for report in all_batch_records(s3, state_location, parent_id)}
