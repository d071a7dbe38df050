"""How a namespace purge starts the workflows it hands work to (table purges, table ranges): on
its own task queue, never a second run under an id already used, and a cancel waited through to
the child's end, so no count is lost to a child still deleting."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypeVar

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import TypedSearchAttributes, WorkflowIDReusePolicy

ResultT = TypeVar("ResultT")


async def start_child_purge(
    workflow_type: str,
    argument: BaseModel,
    *,
    child_id: str,
    result_type: type[ResultT],
    close_policy: workflow.ParentClosePolicy,
    summary: str,
    search_attributes: TypedSearchAttributes | None = None,
    task_timeout: timedelta | None = None,
) -> workflow.ChildWorkflowHandle[Any, ResultT]:
    return await workflow.start_child_workflow(
        workflow_type,
        argument.model_dump(mode="json"),
        id=child_id,
        result_type=result_type,
        task_queue=workflow.info().task_queue,
        parent_close_policy=close_policy,
        cancellation_type=workflow.ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
        id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        static_summary=summary,
        search_attributes=search_attributes,
        task_timeout=task_timeout,
    )
