"""How a workflow calls an activity: by its Step (icepurge.contract.activity_steps), so the name,
the input's type, the result's type, the timeouts and the retries come from one definition."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from icepurge.contract.activity_steps import Input, Result, Step


def start_step(
    step: Step[Input, Result],
    argument: Input,
    *,
    summary: str | None = None,
    cancellation_type: workflow.ActivityCancellationType = workflow.ActivityCancellationType.TRY_CANCEL,
) -> workflow.ActivityHandle[Result]:
    return workflow.start_activity(
        step.name,
        argument,
        result_type=step.result_type,
        start_to_close_timeout=step.timeout,
        heartbeat_timeout=step.heartbeat,
        retry_policy=step.retry,
        cancellation_type=cancellation_type,
        summary=summary,
    )


async def run_step(
    step: Step[Input, Result],
    argument: Input,
    *,
    summary: str | None = None,
    cancellation_type: workflow.ActivityCancellationType = workflow.ActivityCancellationType.TRY_CANCEL,
) -> Result:
    return await start_step(step, argument, summary=summary, cancellation_type=cancellation_type)


async def try_step_in_task(step: Step[Input, Result], argument: Input, timeout: timedelta) -> Result:
    """One attempt of the step inside the workflow task (a local activity): no dispatch, no task
    after it. Local attempts show in no pending-activity list, so there is one, kept short; the
    caller retries as an activity, whose attempts show."""
    result: Result = await workflow.execute_local_activity(
        step.name,
        argument,
        result_type=step.result_type,
        start_to_close_timeout=timeout,
        retry_policy=RetryPolicy(maximum_attempts=1),
    )
    return result
