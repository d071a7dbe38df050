"""Changes to workflow code that a running purge must not see halfway: each is a
`workflow.patched` id. A run started before the change replays and goes on as it began; runs
started after it (continue-as-new included) take the new path. tests/workflows/test_replay.py replays
histories recorded before each change."""

from typing import Final

# A namespace purge keeps its table list under its run chain and gives each table purge a request
# id that carries the chain: a later purge of the same namespace shares neither.
RUN_SCOPED_STATE: Final = "run-scoped-state"
# A dry run (and a dry run's sweep) runs the live-table guard as a preview of the real run's.
PREVIEW_GUARDS: Final = "preview-guards"
# A namespace purge's dry run says which namespaces the real run would drop.
PREVIEW_DROPS: Final = "preview-drops"
# The location sweep runs on every store that can list (S3, Azure Blob/ADLS, the local disk),
# not on S3 alone.
SWEEP_ANY_LISTABLE_STORE: Final = "sweep-any-listable-store"
# A purge by name loads and plans in one activity, and a table whose plan fits one small chunk is
# dropped, guarded, deleted and finalized in a second (icepurge.workflows.table.express_lane).
EXPRESS_LANE: Final = "express-lane"
# A retried step's error goes into the memo listings read (and out of it once the step moves on).
WAITING_MEMO: Final = "waiting-memo"
# A table purge of a namespace purge signals its parent only what the parent can't learn from the
# child itself: its start and its ending with a report are the parent's own child-workflow events.
PARENT_SIGNALS: Final = "parent-signals"
# A purge by name on the express lane loads, plans and drops in one activity, its plan kept in the
# state location before the drop (icepurge.activities.catalog.planned_drop): one workflow task fewer
# before a front door's answer.
DROP_WITH_PLAN: Final = "drop-with-plan"
# A hold runs first in the purge's first workflow task (a local activity), then, if that attempt
# failed, as an activity: a front door's answer waits for no activity dispatch and no second task.
HOLD_IN_WORKFLOW_TASK: Final = "hold-in-workflow-task"
# A closed purge's outcome note (files already gone, and why) goes into the memo listings read.
OUTCOME_MEMO: Final = "outcome-memo"
# A small purge by snapshot on the express lane plans, guards, deletes and finalizes in one activity
# (plan_and_finish_small): one workflow task from its start to its deletes' end.
SNAPSHOT_AT_ONCE: Final = "snapshot-at-once"
# A namespace purge's window counts work units (a batch counts once), and a batch is named by its
# place in the table list and answers with counts (purge_range_batch): a few hundred bytes of
# history a batch, whatever its tables' names and reports.
SLIM_BATCHES: Final = "slim-batches"
# A namespace purge of more tables than one range hands ranges of its table list to child
# PurgeTableRange workflows (icepurge.workflows.namespace.namespace_ranges).
TABLE_RANGES: Final = "table-ranges"
# A tree of fewer ranges than its window has room for shares the whole window and budget among
# them (icepurge.contract.range_steps.ranges_in_flight): two ranges of a window of 64 run 32 units
# each, where each ran 16 and half the window stood idle.
WHOLE_WINDOW_RANGES: Final = "whole-window-ranges"
# A namespace purge (or range) of fewer tables than its window holds shares its budget among the
# tables it has, not among the window's places: three tables of a window of 16 take a third each.
BUDGET_OVER_TABLES_LEFT: Final = "budget-over-tables-left"
# A chunk of a table purge with a budget takes its share over the chunks that can still run at
# once (the window, or the chunks not yet finished if fewer), not over the window: a one-chunk table
# in a window of 2 used half its budget.
CHUNK_SHARES_OVER_CHUNKS_LEFT: Final = "chunk-shares-over-chunks-left"
# A range's tallies held back by its signal interval go to the namespace purge once the interval is
# up: a range that pauses, or waits on one long table, no longer leaves its last tallies unsaid.
RANGE_TRAILING_PROGRESS: Final = "range-trailing-progress"
# A tree's events tell its ranges' tallies as they come (at most every progress interval): its own
# rounds end only as a range ends: a 10^5-table tree's two ranges end together, near its close.
RANGE_PROGRESS_EVENTS: Final = "range-progress-events"
# A purge that stands paused tells its sinks what its progress events' interval held back, once the
# interval is up: nothing later would, and its sinks (a namespace purge counting a table purge's
# files among them) stayed up to an interval's work behind for as long as it stood.
PAUSED_PROGRESS_TOLD: Final = "paused-progress-told"
# A namespace purge's search attributes follow its tables' progress at most once an interval (every
# state change still at once), and follow it too as its table purges' events and its ranges'
# progress come: a flat purge upserted them every round, a visibility write and a history event
# each (bench/results/control_plane_attributes_interval_ab.txt: with the worker's contexts asked once,
# 18 % less server CPU a table at 10^4).
PROGRESS_ATTRIBUTES_INTERVAL: Final = "progress-attributes-interval"
# A namespace purge's enumeration and a purge's final events are first tried inside the workflow
# task (local activities), then as activities: a 10^4-table purge's start and close each lost a task
# and a dispatch, 0.03 s of its ~1 s (bench/results/control_plane_steps_in_task_ab.txt).
ENUMERATE_IN_WORKFLOW_TASK: Final = "enumerate-in-workflow-task"
FINAL_EVENTS_IN_WORKFLOW_TASK: Final = "final-events-in-workflow-task"
# A run decides the patches it may consult after a step inside the workflow task before that step.
# A query that comes just as such a step ends can end the task with the step's marker; the code
# after the step then runs in a task of its own, but a replay hands it the step's result in the task
# before, whose successor's patch markers it does not know yet: a patch it consulted there first
# read False, and the replay failed (a tree's status query, after its cancel; a held purge). For
# the same reason, the code right after such a step decides no command by workflow.now(): a replay
# runs it at the earlier task's time.
PATCHES_BEFORE_STEPS_IN_TASK: Final = "patches-before-steps-in-task"

# What each workflow with steps inside the task decides before them: a namespace purge every patch
# it consults (at its start); a held purge what its steps after the hold do.
NAMESPACE_PURGE_PATCHES: Final = (
    RUN_SCOPED_STATE,
    SLIM_BATCHES,
    PROGRESS_ATTRIBUTES_INTERVAL,
    ENUMERATE_IN_WORKFLOW_TASK,
    TABLE_RANGES,
    WHOLE_WINDOW_RANGES,
    BUDGET_OVER_TABLES_LEFT,
    RANGE_PROGRESS_EVENTS,
    PAUSED_PROGRESS_TOLD,
    PREVIEW_DROPS,
    FINAL_EVENTS_IN_WORKFLOW_TASK,
)
AFTER_HOLD_PATCHES: Final = (
    EXPRESS_LANE,
    DROP_WITH_PLAN,
    WAITING_MEMO,
    OUTCOME_MEMO,
    PREVIEW_GUARDS,
    SWEEP_ANY_LISTABLE_STORE,
    CHUNK_SHARES_OVER_CHUNKS_LEFT,
    PAUSED_PROGRESS_TOLD,
    PARENT_SIGNALS,
    FINAL_EVENTS_IN_WORKFLOW_TASK,
)
