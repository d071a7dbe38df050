"""The start both workflows share, in `@workflow.init`: the request parsed (a bad one is kept as
the reason the run fails, so its queries can say why from the first instant), the status the last
run carried or a fresh one, and the event stream going on from the last run's cursor."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from icepurge.contract.events import EventCursor
from icepurge.contract.request import PurgeOptions
from icepurge.contract.validation import InvalidPurgeRequestError
from icepurge.workflows.shared.event_stream import EventSource, EventStream


class StartedRequest(Protocol):
    @property
    def options(self) -> PurgeOptions: ...

    @property
    def notify_workflow_id(self) -> str | None: ...


Request = TypeVar("Request", bound=StartedRequest)
Status = TypeVar("Status")
CarriedStatus_co = TypeVar("CarriedStatus_co", covariant=True)


class Carried(Protocol[CarriedStatus_co]):
    """What a run hands the next through continue-as-new: at least its status and event cursor."""

    @property
    def status(self) -> CarriedStatus_co: ...

    @property
    def events(self) -> EventCursor: ...


@dataclass(frozen=True)
class RunStart(Generic[Request, Status]):
    request: Request
    status: Status
    events: EventStream


def start_run(
    raw: dict[str, Any],
    parse: Callable[[dict[str, Any]], Request],
    carried: Carried[Status] | None,
    fresh: Callable[[Request], Status],
    source: Callable[[Status], EventSource],
) -> RunStart[Request, Status] | str:
    """The run's start, or, for a request that doesn't parse, why."""
    try:
        request = parse(raw)
    except InvalidPurgeRequestError as error:
        return str(error)
    status = carried.status if carried else fresh(request)
    events = EventStream.for_run(
        source(status),
        carried.events if carried else None,
        request.options.progress_event_seconds,
        request.notify_workflow_id,
    )
    return RunStart(request, status, events)
