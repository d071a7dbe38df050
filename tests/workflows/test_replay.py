"""Histories recorded on earlier releases (tests/record_histories.py) replay on today's workflow
code without a nondeterminism error: a purge started before an upgrade finishes after it."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from icepurge.contract.names import NAMESPACE_WORKFLOW_TYPE, TABLE_RANGE_WORKFLOW_TYPE, WORKFLOW_TYPE
from icepurge.workflows.shared.echo import ECHO_WORKFLOW_TYPE
from icepurge.workflows.shared.upgrades import PATCHES_BEFORE_STEPS_IN_TASK
from tests.paths import TESTS
from tests.workflows.replays import replay_failure
from tests.workflows.task_splits import split_after_steps_in_task

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
    failure = await replay_failure(saved["workflow_id"], saved["history"])
    assert failure is None, failure


def _patches(recorded: Path) -> set[str]:
    """The patches the run's markers record."""
    markers = (
        event.get("markerRecordedEventAttributes", {}) for event in _saved(recorded)["history"]["events"]
    )
    payloads = (
        payload
        for marker in markers
        for payload in marker.get("details", {}).get("patch-data", {}).get("payloads", [])
    )
    return {json.loads(base64.b64decode(payload["data"]))["id"] for payload in payloads}


# Recorded since runs decide their patches before their steps inside the workflow task, with such a
# step that commands of its own task follow.
SPLITTABLE = [
    path
    for path in HISTORIES
    if PATCHES_BEFORE_STEPS_IN_TASK in _patches(path)
    and split_after_steps_in_task(_saved(path)["history"])[1]
]


def test_the_histories_split_below_hold_a_namespace_purge_and_a_held_purge() -> None:
    assert {"namespace_purge_ranged", "namespace_purge_dry_run", "table_purge_held"} <= {
        path.name.removesuffix(".json.gz") for path in SPLITTABLE
    }


@pytest.mark.parametrize("name", ["namespace_purge_ranged", "table_purge_held"])
async def test_a_history_recorded_before_patches_were_decided_first_fails_to_replay_split(name: str) -> None:
    """The split below is the one that failed: 197e6b2 consulted patches after a step inside the
    task, and its histories so split fail on any code, as the CI's tree test did."""
    saved = _saved(TESTS / "histories" / "v197e6b2" / f"{name}.json.gz")
    split, splits = split_after_steps_in_task(saved["history"])
    failure = await replay_failure(saved["workflow_id"], split)
    assert splits and "Nondeterminism" in str(failure), failure


@pytest.mark.parametrize("recorded", SPLITTABLE, ids=lambda path: f"{path.parent.name}/{path.name}")
async def test_a_recorded_history_replays_whatever_task_the_code_after_its_steps_in_task_ran_in(
    recorded: Path,
) -> None:
    """A query that came just as a step inside the workflow task ended would have left the code
    after it to a task of its own (task_splits)."""
    saved = _saved(recorded)
    split, _ = split_after_steps_in_task(saved["history"])
    failure = await replay_failure(saved["workflow_id"], split)
    assert failure is None, failure
