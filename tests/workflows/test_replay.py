"""Histories recorded on earlier releases (tests/record_histories.py) replay on today's workflow
code without a nondeterminism error: a purge started before an upgrade finishes after it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from icepurge.contract.names import NAMESPACE_WORKFLOW_TYPE, TABLE_RANGE_WORKFLOW_TYPE, WORKFLOW_TYPE
from icepurge.worker.sandbox_runner import sandboxed_runner
from icepurge.workflows.namespace.purge_namespace import PurgeNamespaceWorkflow
from icepurge.workflows.namespace.purge_table_range import PurgeTableRangeWorkflow
from icepurge.workflows.shared.echo import ECHO_WORKFLOW_TYPE, EchoWorkflow
from icepurge.workflows.table.purge_table import PurgeTableWorkflow
from tests.paths import TESTS

HISTORIES = sorted((TESTS / "histories").glob("*/*.json.gz"))


def _saved(recorded: Path) -> dict[str, Any]:
    saved: dict[str, Any] = json.loads(gzip.decompress(recorded.read_bytes()))
    return saved


def _workflow_type(recorded: Path) -> str:
    first = _saved(recorded)["history"]["events"][0]
    return str(first["workflowExecutionStartedEventAttributes"]["workflowType"]["name"])


def test_every_workflow_type_and_main_path_has_a_recorded_history() -> None:
    assert {_workflow_type(path) for path in HISTORIES} == {
        WORKFLOW_TYPE,
        NAMESPACE_WORKFLOW_TYPE,
        TABLE_RANGE_WORKFLOW_TYPE,
        ECHO_WORKFLOW_TYPE,
    }
    names = {path.name.removesuffix(".json.gz") for path in HISTORIES}
    assert {
        "table_purge_continue_as_new-run2",
        "table_purge_soft_delete_undrop",
        "table_purge_soft_delete_expedite",
        "table_purge_controls",
        "table_purge_failed",
        "table_purge_sweep",
        "table_purge_express",
        "namespace_purge",
        "namespace_purge_batched",
        "namespace_purge_ranged",
        "table_range",
    } <= names


@pytest.mark.parametrize("recorded", HISTORIES, ids=lambda path: f"{path.parent.name}/{path.name}")
async def test_a_recorded_history_replays_on_todays_code(recorded: Path) -> None:
    saved = _saved(recorded)
    # Child ids derive from the workflow's own id: a replay under another id would differ.
    history = WorkflowHistory.from_json(saved["workflow_id"], saved["history"])
    replayer = Replayer(
        workflows=[PurgeTableWorkflow, PurgeNamespaceWorkflow, PurgeTableRangeWorkflow, EchoWorkflow],
        data_converter=pydantic_data_converter,
        workflow_runner=sandboxed_runner(),
    )
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure
