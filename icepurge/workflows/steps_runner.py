"""How a workflow calls an activity: by its Step (icepurge.contract.activity_steps), so the name,
the input's type, the result's type, the timeouts and the retries come from one definition."""

from __future__ import annotations

from temporalio import workflow

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
