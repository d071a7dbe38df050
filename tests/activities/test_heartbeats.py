"""A step's heartbeats go to the SDK once per new checkpoint and at most once a second otherwise:
each one waits for the worker's event loop, which under load held a small plan for most of its
time (icepurge.activities.heartbeats). A step on a pulse beats while a call of its can't, and
every pulse carries the checkpoint last sent."""

from __future__ import annotations

import contextvars
import dataclasses
import threading
import time

from pyiceberg.catalog.sql import SqlCatalog
from temporalio.testing import ActivityEnvironment

from icepurge.activities.heartbeats import SECONDS_BETWEEN, Beats, heartbeat, pulsing
from icepurge.activities.purge.purge_activities import PurgeActivities
from icepurge.activities.purge.purge_services import PurgeServices
from icepurge.contract.steps import PlanInput
from icepurge.devstack.stack import EmbeddedStack
from icepurge.worker.settings import WorkerSettings
from tests.purge_helpers import request_for
from tests.tables import simple_table


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_new_details_go_out_at_once_and_bare_beats_once_a_second() -> None:
    sent: list[tuple[object, ...]] = []
    clock = Clock()
    beats = Beats(send=lambda *details: sent.append(details), clock=clock)
    beats.beat()
    beats.beat()
    beats.beat("checkpoint 1")
    beats.beat("checkpoint 1")
    beats.beat("checkpoint 2")
    assert sent == [(), ("checkpoint 1",), ("checkpoint 2",)]
    clock.now += SECONDS_BETWEEN
    beats.beat("checkpoint 2")
    clock.now += SECONDS_BETWEEN / 2
    beats.beat("checkpoint 2")
    assert sent[3:] == [("checkpoint 2",)]


def test_a_batchs_beats_go_out_bare_once_a_second_whatever_their_details() -> None:
    sent: list[tuple[object, ...]] = []
    clock = Clock()
    beats = Beats(keep_details=False, send=lambda *details: sent.append(details), clock=clock)
    for checkpoint in range(5):
        beats.beat(checkpoint)
    clock.now += SECONDS_BETWEEN
    beats.beat("later")
    assert sent == [(), ()]


def test_a_pulse_carries_the_last_checkpoint_at_most_once_a_second() -> None:
    sent: list[tuple[object, ...]] = []
    clock = Clock()
    beats = Beats(send=lambda *details: sent.append(details), clock=clock)
    beats.pulse()
    beats.beat("checkpoint 1")
    beats.pulse()
    clock.now += SECONDS_BETWEEN
    beats.pulse()
    beats.pulse()
    assert sent == [(), ("checkpoint 1",), ("checkpoint 1",)]


def test_a_step_on_a_pulse_beats_while_it_waits_on_a_call_and_stops_when_it_ends() -> None:
    """A call that can't beat (here, a wait of 2.5 s): the pulse's thread beats meanwhile, with
    the step's checkpoint; after the step, nothing more."""
    environment = ActivityEnvironment()
    sent: list[tuple[object, ...]] = []
    environment.on_heartbeat = lambda *details: sent.append(details)

    def step() -> None:
        heartbeat("checkpoint")
        with pulsing():
            threading.Event().wait(2.5)

    contextvars.copy_context().run(environment.run, step)
    beats = len(sent)
    time.sleep(1.5)
    assert sent[0] == ("checkpoint",)
    assert 2 <= beats == len(sent) and set(sent) == {("checkpoint",)}


def test_a_step_inside_a_workflow_task_sends_no_beat() -> None:
    """A local activity (a step's first attempt inside the workflow task) has no heartbeat: the
    SDK's core warned of an unknown activity at every beat of one."""
    environment = ActivityEnvironment()
    environment.info = dataclasses.replace(environment.info, is_local=True)
    sent: list[tuple[object, ...]] = []
    environment.on_heartbeat = lambda *details: sent.append(details)

    def step() -> None:
        heartbeat("checkpoint")
        with pulsing():
            heartbeat("later")

    contextvars.copy_context().run(environment.run, step)
    assert sent == []


def test_a_plan_beats_once_per_checkpoint_not_once_per_read(
    stack: EmbeddedStack, lake: SqlCatalog, worker_settings: WorkerSettings
) -> None:
    """Six snapshots: a metadata log, six manifest lists and their manifests, each read once."""
    table = simple_table(lake, ("beats",), "six_snapshots", appends=6)
    purges = PurgeActivities(PurgeServices.build(worker_settings.activity_settings()))
    environment = ActivityEnvironment()
    sent: list[tuple[object, ...]] = []
    environment.on_heartbeat = lambda *details: sent.append(details)
    step = PlanInput(purge_id="beats-six-snapshots", request=request_for(table, stack.s3_properties))
    summary = contextvars.copy_context().run(environment.run, purges.plan_purge, step)
    assert summary.planned.files > 6 * 2
    assert len(sent) <= len({repr(details) for details in sent}) + 1
    assert len(sent) < 6
