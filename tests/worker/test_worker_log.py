"""The worker's log reads as an operator needs it: an expected failure (a typed error: a table not
found, a store retried) is one line naming the step, the purge and the reason; a traceback is
kept for the unexpected."""

from __future__ import annotations

import logging

import pytest

from icepurge.api.clients.errors import PurgeFailedError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.contract.names import ERROR_TABLE_NOT_FOUND
from tests.conftest import LAKE_CATALOG


async def test_an_expected_failure_is_one_line_without_a_traceback(
    purges: PurgeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    purge_id = await purges.purge_by_name(
        LAKE_CATALOG, ["worker_log"], "never_created", requested_by="pytest"
    )
    with pytest.raises(PurgeFailedError) as failed:
        await purges.wait(purge_id)
    assert failed.value.error_type == ERROR_TABLE_NOT_FOUND
    told = [record for record in caplog.records if record.name == "icepurge.worker.expected_failures"]
    ours = [record.getMessage() for record in told if purge_id in record.getMessage()]
    assert len(ours) == 1, ours
    assert "\n" not in ours[0] and f"fails the step: {ERROR_TABLE_NOT_FOUND}: " in ours[0]
    traced = [
        record.getMessage()
        for record in caplog.records
        if record.levelno >= logging.WARNING and record.exc_info is not None
    ]
    assert traced == []
