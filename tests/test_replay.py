"""Histories recorded on earlier releases (tests/record_histories.py) replay on today's workflow
code without a nondeterminism error: a purge started before an upgrade finishes after it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from icepurge.worker.run import sandboxed_runner
from icepurge.workflows.purge_namespace import PurgeNamespaceWorkflow
from icepurge.workflows.purge_table import PurgeTableWorkflow

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*/*.json.gz"))


def test_there_are_recorded_histories_to_replay() -> None:
    assert len(HISTORIES) >= 4


@pytest.mark.parametrize("recorded", HISTORIES, ids=lambda path: f"{path.parent.name}/{path.name}")
async def test_a_recorded_history_replays_on_todays_code(recorded: Path) -> None:
    saved = json.loads(gzip.decompress(recorded.read_bytes()))
    # Child ids derive from the workflow's own id: a replay under another id would differ.
    history = WorkflowHistory.from_json(saved["workflow_id"], saved["history"])
    replayer = Replayer(
        workflows=[PurgeTableWorkflow, PurgeNamespaceWorkflow],
        data_converter=pydantic_data_converter,
        workflow_runner=sandboxed_runner(),
    )
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure
