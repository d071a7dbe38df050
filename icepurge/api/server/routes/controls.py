"""A running purge's controls, for a table purge and a namespace purge alike: pause, resume and
the rate budget on both, undrop and expedite on a table purge's soft-delete window. One table of
controls, one endpoint each per kind; their paths, names and roles are the API's as before."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from operator import methodcaller
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.dependencies import Caller, Purges
from icepurge.api.server.purge_access import authorize
from icepurge.contract.controls import RateBudgetChange
from icepurge.contract.namespace_status import NamespacePurgeStatus
from icepurge.contract.roles import Role
from icepurge.contract.status import PurgeStatus

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["controls"])


@dataclass(frozen=True, eq=False)
class PurgeKindRoutes:
    """Where one kind of purge lives in the API, and which client answers for it."""

    collection: str
    noun: str
    status: type[BaseModel]
    clients: Callable[[PurgeClient], Any]
    # The route names (and so the operation ids) the API has always had.
    names: dict[str, str]


@dataclass(frozen=True)
class Control:
    action: str
    role: Role
    done: str


TABLE = PurgeKindRoutes(
    "purges",
    "purge",
    PurgeStatus,
    lambda client: client,
    {
        "pause": "pause_purge",
        "resume": "resume_purge",
        "rate-budget": "set_rate_budget",
        "undrop": "undrop_purge",
        "expedite": "expedite_purge",
    },
)
NAMESPACE = PurgeKindRoutes(
    "namespace-purges",
    "namespace purge",
    NamespacePurgeStatus,
    lambda client: client.namespaces,
    {
        "pause": "pause_namespace_purge",
        "resume": "resume_namespace_purge",
        "rate-budget": "set_namespace_rate_budget",
    },
)
PAUSE = Control("pause", Role.CONTROL, "paused")
RESUME = Control("resume", Role.CONTROL, "resumed")
UNDROP = Control("undrop", Role.DROP, "undropped")
EXPEDITE = Control("expedite", Role.DROP, "expedited")
DESCRIPTIONS = {
    (TABLE, PAUSE): "Running chunks stop at their checkpoints; 409 when the purge can't pause now.",
    (TABLE, RESUME): "",
    (TABLE, UNDROP): "Ends a SCHEDULED purge with nothing deleted and registers the table again; 409 once "
    "its deletes began or when the identifier is taken.",
    (TABLE, EXPEDITE): "Starts a SCHEDULED purge's deletes now; 409 when it isn't SCHEDULED.",
    (NAMESPACE, PAUSE): "No table purge starts until resume; the running ones pause at their checkpoints.",
    (NAMESPACE, RESUME): "",
}
BUDGET_DESCRIPTIONS = {
    TABLE: "In force within seconds: running chunks restart from their checkpoints on the new budget.",
    NAMESPACE: "One per-bucket budget for the whole namespace purge, shared evenly by its window.",
}


def _control(kind: PurgeKindRoutes, control: Control) -> Callable[..., Coroutine[Any, Any, Any]]:
    async def endpoint(purge_id: str, caller: Caller, client: Purges) -> Any:
        await authorize(client, caller, control.role, purge_id)
        status = await methodcaller(control.action, purge_id)(kind.clients(client))
        log.info("%s %s %s by %s", kind.noun, purge_id, control.done, caller.name)
        return status

    return endpoint


def _rate_budget(kind: PurgeKindRoutes) -> Callable[..., Coroutine[Any, Any, Any]]:
    async def endpoint(purge_id: str, body: RateBudgetChange, caller: Caller, client: Purges) -> Any:
        await authorize(client, caller, Role.CONTROL, purge_id)
        status = await kind.clients(client).set_rate_budget(purge_id, body.bucket_requests_per_second)
        log.info(
            "%s %s budget set to %s by %s", kind.noun, purge_id, body.bucket_requests_per_second, caller.name
        )
        return status

    return endpoint


for (kind, control), description in DESCRIPTIONS.items():
    router.add_api_route(
        f"/{kind.collection}/{{purge_id}}/{control.action}",
        _control(kind, control),
        methods=["POST"],
        response_model=kind.status,
        name=kind.names[control.action],
        description=description,
    )
for kind, description in BUDGET_DESCRIPTIONS.items():
    router.add_api_route(
        f"/{kind.collection}/{{purge_id}}/rate-budget",
        _rate_budget(kind),
        methods=["PUT"],
        response_model=kind.status,
        name=kind.names["rate-budget"],
        description=description,
    )
