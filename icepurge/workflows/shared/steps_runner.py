"""How a workflow calls an activity: by its Step (icepurge.contract.activity_steps), so the name,
the input's type, the result's type, the timeouts and the retries come from one definition."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, CancelledError, FailureError

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


async def run_step_in_task_first(
    step: Step[Input, Result], argument: Input, timeout: timedelta, *, summary: str | None = None
) -> Result:
    """The step's first attempt inside the workflow task (a local activity): no dispatch, and no
    task after it to take its result. Local attempts show in no pending-activity list, so there is
    one, kept short; unless cancelled, the step goes on as the activity, whose attempts show and
    whose failures come as every step's do (a refusal meets its activity attempt again)."""
    try:
        result: Result = await workflow.execute_local_activity(
            step.name,
            argument,
            result_type=step.result_type,
            start_to_close_timeout=timeout,
            retry_policy=RetryPolicy(maximum_attempts=1),
        )
        return result
    except FailureError as error:
        # temporalio 1.35 raises a local attempt's own failure bare, a timeout in an ActivityError.
        if _cancelled(error):
            raise
    return await run_step(step, argument, summary=summary)


def _cancelled(error: FailureError) -> bool:
    return isinstance(error, CancelledError) or (
        isinstance(error, ActivityError) and isinstance(error.cause, CancelledError)
    )
