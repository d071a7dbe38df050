"""The Python client over Temporal directly (icepurge/api/clients/http_client.py is the same over HTTP)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
from datetime import UTC
from typing import Any

from temporalio.client import (
    WithStartWorkflowOperation,
    WorkflowExecution,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from icepurge.api.clients.closed_by_server import listed_closed
from icepurge.api.clients.errors import (
    PurgeControlRejectedError,
    PurgeNotFoundError,
)
from icepurge.api.clients.listing import PurgeFilter, PurgePage, PurgeSummary, kind_of, visibility_query
from icepurge.api.clients.rerun_requests import NoLoadedSnapshotError, rerun_request
from icepurge.api.clients.temporal_namespace_client import NamespacePurgeClient
from icepurge.api.clients.temporal_results import translate_rpc_error
from icepurge.api.clients.workflow_purges import WorkflowPurges
from icepurge.contract import search_attributes as attributes
from icepurge.contract.controls import DropConfirmation, Stage, StageWait
from icepurge.contract.names import (
    AWAIT_STAGE_UPDATE,
    DROP_CONFIRMED_SIGNAL,
    ERROR_MEMO,
    EXPEDITE_UPDATE,
    OUTCOME_MEMO,
    UNDROP_UPDATE,
    WAITING_MEMO,
    WORKFLOW_TYPE,
)
from icepurge.contract.purge_id import purge_id_for
from icepurge.contract.reasons import closed_start_note
from icepurge.contract.request import PurgeOptions, PurgeRequest
from icepurge.contract.started import StartOutcome
from icepurge.contract.states import PurgeState
from icepurge.contract.status import PurgeReport, PurgeStatus, RetryingStep
from icepurge.contract.validation import InvalidPurgeRequestError, by_name_request, parse_request
from icepurge.contract.workflow_tasks import TABLE_PURGE_TASK_TIMEOUT

_ERROR_LIMIT = 500
# A failed update-with-start has settled its start operation by the time it raised.
_SETTLED_SECONDS = 1.0
# How a server that does not take update-with-start (ExecuteMultiOperation) refuses it.
_NO_UPDATE_WITH_START = (RPCStatusCode.UNIMPLEMENTED, RPCStatusCode.PERMISSION_DENIED)


async def _summary(execution: WorkflowExecution) -> PurgeSummary:
    found = execution.typed_search_attributes
    state, error = found.get(attributes.STATE), await execution.memo_value(ERROR_MEMO, None)
    closed = listed_closed(execution.status, state)
    if closed is not None:
        state, error = closed
    return PurgeSummary(
        purge_id=execution.id,
        kind=kind_of(execution.workflow_type),
        state=state,
        catalog=found.get(attributes.CATALOG),
        namespace=found.get(attributes.NAMESPACE),
        table=found.get(attributes.TABLE),
        requested_by=found.get(attributes.REQUESTED_BY),
        files_total=found.get(attributes.FILES_TOTAL),
        files_deleted=found.get(attributes.FILES_DELETED),
        files_failed=found.get(attributes.FILES_FAILED),
        error=error,
        waiting=await execution.memo_value(WAITING_MEMO, None),
        outcome_note=await execution.memo_value(OUTCOME_MEMO, None),
        started_at=execution.start_time,
        closed_at=execution.close_time,
        scheduled_for=found.get(attributes.SCHEDULED_FOR),
    )


def _retrying(description: WorkflowExecutionDescription) -> RetryingStep | None:
    """The first step the server is retrying after a failed attempt (the workflow itself can't
    see its pending activities, the server can)."""
    for pending in description.raw_description.pending_activities:
        if pending.attempt > 1 or pending.HasField("last_failure"):
            scheduled = pending.HasField("next_attempt_schedule_time")
            next_at = pending.next_attempt_schedule_time.ToDatetime(tzinfo=UTC) if scheduled else None
            return RetryingStep(
                step=pending.activity_type.name,
                attempt=pending.attempt,
                last_error=pending.last_failure.message[:_ERROR_LIMIT] or None,
                next_attempt_at=next_at,
            )
    return None


async def _read_start_outcome(operation: WithStartWorkflowOperation[Any, Any]) -> None:
    """The failed call's error is also its start operation's: read there too, or asyncio logs it
    as never retrieved."""
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await asyncio.wait_for(operation.workflow_handle(), _SETTLED_SECONDS)


def _reuse_policy(request: PurgeRequest) -> WorkflowIDReusePolicy:
    """A snapshot, or a request id, names one purge forever: a retried start returns it even
    closed. A table's name alone doesn't: once its purge closed, a table re-created under the
    name may be purged again."""
    if request.by_name and request.request_id is None:
        return WorkflowIDReusePolicy.ALLOW_DUPLICATE
    return WorkflowIDReusePolicy.REJECT_DUPLICATE


class PurgeClient(WorkflowPurges[PurgeStatus, PurgeReport]):
    status_type = PurgeStatus
    report_type = PurgeReport

    async def start(self, request: PurgeRequest | dict[str, Any]) -> str:
        """Starts a purge, or returns the one already started for the same table snapshot,
        running or closed: a catalog may retry a start whose answer it never got, and a closed
        purge keeps the result it reached. Running it again is `rerun`.

        Raises InvalidPurgeRequestError (naming the fields) before anything reaches Temporal.
        """
        return (await self.begin(request)).purge_id

    async def begin(self, request: PurgeRequest | dict[str, Any]) -> StartOutcome:
        """start, saying whether the start found its purge already closed: told by the start
        itself (Temporal refused a new run), never by a look afterwards, which would take a new
        run that failed at once for an old one."""
        parsed = parse_request(request)
        purge_id = purge_id_for(parsed)
        try:
            await self._start(parsed, _reuse_policy(parsed))
        except WorkflowAlreadyStartedError:
            return StartOutcome(purge_id=purge_id, closed=await self._closed_note(purge_id))
        return StartOutcome(purge_id=purge_id)

    async def start_again(self, request: PurgeRequest) -> str:
        """Starts the snapshot's purge again when its last run FAILED or was CANCELLED, or
        attaches to a run a concurrent caller started: for a purge that closed before its table
        left the catalog (its caller's drop was refused, or never confirmed), which deleted
        nothing. A last run that completed meanwhile (a concurrent caller's, which dropped the
        table) keeps its result. The earlier runs stay listed."""
        with contextlib.suppress(WorkflowAlreadyStartedError):
            await self._start(request, WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY)
        return purge_id_for(request)

    async def purge_by_name(
        self,
        catalog: str,
        namespace: list[str],
        table: str,
        *,
        requested_by: str,
        options: PurgeOptions | dict[str, Any] | None = None,
        request_id: str | None = None,
    ) -> str:
        """Drops the table from its catalog and purges it, in the crash-safe order: load, plan,
        drop, (wait out options.purge_after_seconds,) delete. The catalog must be configured on
        the workers. Returns the purge id; a start while one runs for the table attaches to it."""
        return await self.start(
            by_name_request(
                catalog, namespace, table, requested_by=requested_by, options=options, request_id=request_id
            )
        )

    async def purge_by_name_until(
        self,
        catalog: str,
        namespace: list[str],
        table: str,
        stage: Stage,
        timeout: float,
        *,
        requested_by: str,
        options: PurgeOptions | dict[str, Any] | None = None,
    ) -> tuple[str, PurgeStatus | None]:
        """purge_by_name and await_stage in one call (update-with-start): the wait reaches the
        workflow with its start, so a purge that gets there in its first workflow task answers
        from it. The status is None when the wait ended first or could not be placed (the caller
        looks at `status`); the purge id may then name no purge, if its start never got through."""
        request = by_name_request(catalog, namespace, table, requested_by=requested_by, options=options)
        purge_id = purge_id_for(request)
        conflict = WorkflowIDConflictPolicy.USE_EXISTING
        operation: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
            WORKFLOW_TYPE,
            request.model_dump(mode="json"),
            **self._start_options(request, _reuse_policy(request), conflict, purge_id),
        )
        wait = self._client.execute_update_with_start_workflow(
            AWAIT_STAGE_UPDATE,
            StageWait(stage=stage),
            start_workflow_operation=operation,
            result_type=PurgeStatus,
        )
        try:
            return purge_id, await asyncio.wait_for(wait, timeout)
        except (
            TimeoutError,
            WorkflowAlreadyStartedError,
            WorkflowUpdateFailedError,
            WorkflowUpdateRPCTimeoutOrCancelledError,
        ):
            await _read_start_outcome(operation)
            return purge_id, None
        except RPCError as error:
            await _read_start_outcome(operation)
            if error.status not in _NO_UPDATE_WITH_START:
                raise translate_rpc_error(error) from None
        # A server without update-with-start (an older one, or with it turned off): nothing was
        # started; the purge starts alone, and the caller waits for it with `await_stage`.
        return await self.start(request), None

    async def rerun(self, purge_id: str, file_io_properties: dict[str, str] | None = None) -> str:
        """Runs a closed purge again with its own request (new FileIO properties, if given, for
        credentials fixed since), asking the store which files are still there: to finish a
        SUCCEEDED_WITH_ERRORS, FAILED or CANCELLED one.
        Refused (PurgeControlRejectedError) while it runs and once it SUCCEEDED; the earlier
        runs stay listed."""
        handle = self._client.get_workflow_handle(purge_id, result_type=PurgeReport)
        try:
            description = await handle.describe()
            if description.status == WorkflowExecutionStatus.RUNNING:
                raise PurgeControlRejectedError(f"purge {purge_id} is still running; cancel it first")
            if description.status == WorkflowExecutionStatus.COMPLETED:
                report: PurgeReport = await handle.result()
                if report.status.state is PurgeState.SUCCEEDED:
                    raise PurgeControlRejectedError(f"purge {purge_id} SUCCEEDED; there is nothing to re-run")
            request = await self._request_of(handle)
            if request.get("metadata_location") is None:
                status = await self.status(purge_id)
                request = await rerun_request(handle, self._client.data_converter, request, status)
        except RPCError as error:
            raise translate_rpc_error(error, purge_id) from None
        except NoLoadedSnapshotError as error:
            raise PurgeControlRejectedError(str(error)) from None
        if file_io_properties is not None:
            request["file_io_properties"] = file_io_properties
        # A rerun is the operator's word that the table left its catalog: it awaits no caller's drop.
        # What the runs before it deleted is gone: it asks the store first, so those files count as
        # already_missing, not as deleted a second time (a bulk delete calls a gone key deleted).
        request["options"] = {**request.get("options", {}), "await_drop_seconds": 0, "check_existence": True}
        parsed = parse_request(request)
        try:
            await self._start(
                parsed,
                WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                WorkflowIDConflictPolicy.FAIL,
                purge_id=purge_id,
            )
        except WorkflowAlreadyStartedError:
            raise PurgeControlRejectedError(f"purge {purge_id} was started again meanwhile") from None
        return purge_id

    async def _start(
        self,
        request: PurgeRequest,
        reuse: WorkflowIDReusePolicy,
        conflict: WorkflowIDConflictPolicy = WorkflowIDConflictPolicy.USE_EXISTING,
        purge_id: str | None = None,
    ) -> None:
        try:
            await self._client.start_workflow(
                WORKFLOW_TYPE,
                request.model_dump(mode="json"),
                **self._start_options(request, reuse, conflict, purge_id or purge_id_for(request)),
            )
        except RPCError as error:
            raise translate_rpc_error(error) from None

    def _start_options(
        self,
        request: PurgeRequest,
        reuse: WorkflowIDReusePolicy,
        conflict: WorkflowIDConflictPolicy,
        purge_id: str,
    ) -> dict[str, Any]:
        return {
            "id": purge_id,
            "task_queue": self._task_queue,
            "id_conflict_policy": conflict,
            "id_reuse_policy": reuse,
            "static_summary": f"purge {request.table_name}",
            "search_attributes": attributes.start_attributes(request),
            "task_timeout": TABLE_PURGE_TASK_TIMEOUT,
        }

    async def request(self, purge_id: str) -> PurgeRequest:
        """The request the purge's latest run started with (FileIO credentials included: the
        caller must keep it to itself)."""
        try:
            return parse_request(await self._request_of(self._client.get_workflow_handle(purge_id)))
        except RPCError as error:
            raise translate_rpc_error(error, purge_id) from None

    async def _request_of(self, handle: WorkflowHandle[Any, Any]) -> dict[str, Any]:
        """The request the latest run started with (the first argument of every run)."""
        async for event in handle.fetch_history_events():
            payloads = event.workflow_execution_started_event_attributes.input.payloads
            decoded = await self._client.data_converter.decode(payloads[:1], [dict[str, Any]])
            request: dict[str, Any] = decoded[0]
            return request
        raise PurgeNotFoundError(f"purge {handle.id} has no history")

    async def status(self, purge_id: str) -> PurgeStatus:
        status, running = await self._status_of(purge_id)
        if running is not None:
            # The server knows when the next attempt is due; the workflow knows the last error even
            # while the next attempt runs.
            status.retrying = _retrying(running) or status.retrying
        return status

    async def _closed_note(self, purge_id: str) -> str | None:
        """What a start that found the purge closed says; None if a rerun started it meanwhile."""
        state = await self._closed_state(purge_id)
        return None if state is None else closed_start_note(purge_id, state)

    async def _closed_state(self, purge_id: str) -> str | None:
        """The state its latest run closed in; None while that run is open."""
        try:
            description = await self._client.get_workflow_handle(purge_id).describe()
        except RPCError as error:
            raise translate_rpc_error(error, purge_id) from None
        if description.status in (None, WorkflowExecutionStatus.RUNNING):
            return None
        return description.typed_search_attributes.get(attributes.STATE) or description.status.name

    async def catalog_of(self, purge_id: str) -> str | None:
        """The purge's catalog, from its search attributes (no workflow code runs)."""
        try:
            description = await self._client.get_workflow_handle(purge_id).describe()
        except RPCError as error:
            raise translate_rpc_error(error, purge_id) from None
        return description.typed_search_attributes.get(attributes.CATALOG)

    async def cancel(self, purge_id: str) -> None:
        """Asks the purge to stop; it ends CANCELLED once its running chunks have stopped.
        PurgeControlRejectedError once it has finished: the server accepts a cancel of a closed
        run without a word, so it is looked at first. A purge that closes between the look and
        the cancel is still told "cancel requested"."""
        state = await self._closed_state(purge_id)
        if state is not None:
            raise PurgeControlRejectedError(
                f"purge {purge_id} has already finished ({state}); there is nothing to cancel"
            )
        try:
            await self._client.get_workflow_handle(purge_id).cancel()
        except RPCError as error:
            raise translate_rpc_error(error, purge_id) from None

    async def await_stage(self, purge_id: str, stage: Stage, timeout: float) -> PurgeStatus | None:
        """The purge's status once it reached `stage` or closed, waited for in the workflow (one
        call, no polling); None after `timeout` seconds or when the wait could not be placed (the
        caller looks at `status` instead)."""
        handle = self._client.get_workflow_handle(purge_id)
        wait = handle.execute_update(AWAIT_STAGE_UPDATE, StageWait(stage=stage), result_type=PurgeStatus)
        try:
            return await asyncio.wait_for(wait, timeout)
        except (TimeoutError, WorkflowUpdateFailedError, RPCError):
            return None

    async def confirm_drop(self, purge_id: str, confirmation: DropConfirmation) -> None:
        """Tells a purge that awaits its caller's drop (options.await_drop_seconds) that the table
        left its catalog: its deletes may begin."""
        try:
            await self._client.get_workflow_handle(purge_id).signal(DROP_CONFIRMED_SIGNAL, confirmation)
        except RPCError as error:
            raise translate_rpc_error(error, purge_id) from None

    async def undrop(self, purge_id: str) -> PurgeStatus:
        """Ends a SCHEDULED purge with nothing deleted and registers its table again (when its
        catalog is configured); refused once the deletes began or when the name is taken."""
        return await self._control(purge_id, UNDROP_UPDATE)

    async def expedite(self, purge_id: str) -> PurgeStatus:
        """Starts a SCHEDULED purge's deletes now."""
        return await self._control(purge_id, EXPEDITE_UPDATE)

    async def list(
        self,
        purge_filter: PurgeFilter | None = None,
        page_size: int = 50,
        page_token: str | None = None,
        catalogs: frozenset[str] | None = None,
    ) -> PurgePage:
        """One page of purges, newest first; `catalogs` limits the result to those catalogs."""
        try:
            token = base64.b64decode(page_token, altchars=b"-_", validate=True) if page_token else None
        except (binascii.Error, ValueError):
            raise InvalidPurgeRequestError("page_token: not a token this service returned") from None
        query = visibility_query(purge_filter or PurgeFilter(), catalogs)
        iterator = self._client.list_workflows(query, page_size=page_size, next_page_token=token)
        try:
            await iterator.fetch_next_page()
        except RPCError as error:
            # A token the server can't decode comes back INVALID_ARGUMENT or, from the dev
            # server's SQLite visibility, UNKNOWN ("something went wrong").
            unknown_token = token is not None and error.status == RPCStatusCode.UNKNOWN
            if error.status == RPCStatusCode.INVALID_ARGUMENT or unknown_token:
                raise InvalidPurgeRequestError("page_token: not a token this service returned") from None
            raise translate_rpc_error(error) from None
        following = iterator.next_page_token
        return PurgePage(
            items=[await _summary(execution) for execution in iterator.current_page or []],
            next_page_token=base64.urlsafe_b64encode(following).decode() if following else None,
        )

    async def namespace_tables(
        self,
        purge_id: str,
        page_size: int = 50,
        page_token: str | None = None,
        catalogs: frozenset[str] | None = None,
    ) -> PurgePage:
        """The table purges a namespace purge started, a page at a time: those of its latest run
        (the same request, started again after an earlier one closed, starts purges of its own)."""
        started = (await self.namespaces.status(purge_id)).started_at
        return await self.list(
            PurgeFilter(parent=purge_id, started_since=started), page_size, page_token, catalogs
        )

    @property
    def namespaces(self) -> NamespacePurgeClient:
        """Namespace and whole-catalog purges, on the same connection."""
        return NamespacePurgeClient(self._client, self._task_queue)
