"""One run of a purge of a table: its request and status, how its status is published, what it
hands the next run through continue-as-new. Deterministic: workflow APIs only."""

from __future__ import annotations

from dataclasses import dataclass

from temporalio import workflow

from icepurge.contract.events import EventCursor
from icepurge.contract.names import OUTCOME_MEMO, WAITING_MEMO
from icepurge.contract.progress import Progress, pending_status, report_at
from icepurge.contract.reasons import shortened, waiting_reason
from icepurge.contract.request import PurgeRequest
from icepurge.contract.search_attributes import progress_updates, scheduled_update
from icepurge.contract.status import PurgeReport, PurgeStatus
from icepurge.contract.steps import PlanSummary
from icepurge.contract.strict_model import StrictModel
from icepurge.workflows.shared.details import details_markdown
from icepurge.workflows.shared.event_stream import EventStream
from icepurge.workflows.shared.upgrades import OUTCOME_MEMO as OUTCOME_MEMO_PATCH
from icepurge.workflows.shared.upgrades import WAITING_MEMO as WAITING_MEMO_PATCH


class CarriedState(StrictModel):
    """What one run hands to the next through continue-as-new: small, whatever the table."""

    status: PurgeStatus
    plan: PlanSummary
    next_chunk: int
    events: EventCursor


class TablePublisher:
    def changed(self, status: PurgeStatus) -> None:
        workflow.upsert_search_attributes(progress_updates(status))
        workflow.set_current_details(details_markdown(status))
        if status.outcome_note and workflow.patched(OUTCOME_MEMO_PATCH):
            workflow.upsert_memo({OUTCOME_MEMO: shortened(status.outcome_note)})

    def details(self, status: PurgeStatus) -> None:
        workflow.set_current_details(details_markdown(status))

    def waiting(self, status: PurgeStatus) -> None:
        if workflow.patched(WAITING_MEMO_PATCH):
            step = status.retrying
            reason = waiting_reason(step.step, step.attempt, step.last_error) if step else None
            workflow.upsert_memo({WAITING_MEMO: shortened(reason) if reason else None})

    def scheduled(self, status: PurgeStatus) -> None:
        workflow.upsert_search_attributes(scheduled_update(status))


@dataclass
class TableRun:
    """A valid request and everything built from it, from the first instant of the run: signals,
    queries and updates that arrive before `run` starts find them."""

    request: PurgeRequest
    progress: Progress
    events: EventStream


def new_status(request: PurgeRequest) -> PurgeStatus:
    return pending_status(workflow.info().workflow_id, request, workflow.now())


def report_of(status: PurgeStatus) -> PurgeReport:
    return report_at(status, workflow.now())


def with_budget(request: PurgeRequest, budget: float | None) -> PurgeRequest:
    return request.with_options(bucket_requests_per_second=budget)
