"""The report's sections, apart from its page models: the command line names them (`purge report
--section`) without loading pydantic."""

from __future__ import annotations

from enum import StrEnum


class ReportSection(StrEnum):
    FAILURES = "failures"
    WOULD_DELETE = "would_delete"
    SKIPPED_FOREIGN = "skipped_foreign"
    UNREADABLE = "unreadable"
