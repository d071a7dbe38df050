"""The front door's routes, under /iceberg/{catalog}: a REST catalog's base URL for clients
(`uri` = http://<api>/iceberg/<catalog>). `GET v1/config` keeps clients on the front door; a
table DELETE with purgeRequested=true (or without it, under purge_unspecified_drops) becomes a
purge; every other call passes through.

Service mode: callers present icepurge tokens (reads need `read`, everything else `drop`, on the
catalog), and the front door calls the upstream as itself (SigV4 or its own token). Pass-through
mode: every call goes upstream with the caller's own credentials, the drop included."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlencode

import httpx
from fastapi import APIRouter, HTTPException, Request, Response
from temporalio.service import RPCError

from icepurge.api.clients.errors import PurgeServiceUnavailableError
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.api.server.dependencies import principal
from icepurge.api.server.front_door.drops import TableId, drop_with_purge, dropped_by_its_purge, rehearse_drop
from icepurge.api.server.front_door.errors import iceberg_error
from icepurge.api.server.front_door.pass_through import drop_as_caller
from icepurge.api.server.front_door.policy import FrontDoorAuth, FrontDoorPolicy
from icepurge.api.server.front_door.proxy import Call, Forwarded, forward
from icepurge.api.server.front_door.upstream import Upstream, UpstreamConfigError
from icepurge.api.server.settings import ApiSettings
from icepurge.api.server.temporal_connection import TemporalConnection
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.contract.roles import Role

PURGE_ID_HEADER = "X-Icepurge-Purge-Id"
# A drop with purge's answer says how long the front door took to give it (RFC Server-Timing,
# milliseconds): what a client measures beyond it is its own or the network's.
SERVER_TIMING_HEADER = "Server-Timing"
SERVER_TIMING_METRIC = "icepurge-drop"
# The Iceberg REST spec's multi-level namespace separator in a path segment.
NAMESPACE_SEPARATOR = "\x1f"
_TABLE_PATH = re.compile(
    r"^v1/(?:(?P<prefix>[^/]+)/)?namespaces/(?P<namespace>[^/]+)/tables/(?P<table>[^/]+)$"
)
_READS = frozenset({"GET", "HEAD"})
CONFIG_PATH = "v1/config"
# Where the store is, which a client needs to write a table: no credential among them.
STORE_SETTINGS_SHOWN = ("s3.endpoint", "s3.region", "s3.path-style-access", "s3.force-virtual-addressing")
# The caller's name in pass-through mode: the upstream knows who it is, icepurge doesn't.
UPSTREAM_AUTHORIZED = "upstream-authorized"

router = APIRouter(prefix="/iceberg", include_in_schema=False)


@dataclass(frozen=True)
class Door:
    """One admitted call's context: the catalog's policy, its upstream, the caller's name."""

    catalog: str
    policy: FrontDoorPolicy
    upstream: Upstream
    caller: str
    client: httpx.AsyncClient
    catalog_properties: dict[str, str] = field(repr=False)

    @property
    def as_caller(self) -> bool:
        return self.policy.auth is FrontDoorAuth.PASS_THROUGH

    async def send(self, call: Call) -> Forwarded:
        return await forward(self.client, self.upstream, call, as_caller=self.as_caller)


@router.api_route("/{catalog}/{path:path}", methods=["GET", "HEAD", "POST", "PUT", "DELETE"])
async def front_door(catalog: str, path: str, request: Request) -> Response:
    began = time.perf_counter()
    call = Call(
        request.method, _raw_path(request), request.url.query, dict(request.headers), await request.body()
    )
    door = _admitted(request, catalog, call)
    if isinstance(door, Response):
        return door
    try:
        table = _purge_drop(catalog, call, door.policy)
        if table is not None:
            dropped = await _drop(request, door, call, table)
            took = (time.perf_counter() - began) * 1000
            dropped.headers[SERVER_TIMING_HEADER] = f"{SERVER_TIMING_METRIC};dur={took:.1f}"
            return dropped
        answer = await door.send(_with_warehouse(call, door.upstream))
    except httpx.HTTPError as error:
        return iceberg_error(
            503, "ServiceUnavailableException", f"upstream unreachable: {type(error).__name__}"
        )
    except (PurgeServiceUnavailableError, RPCError) as error:
        # Nothing was dropped: the purge's start is the drop's first durable step.
        return iceberg_error(503, "ServiceUnavailableException", f"{error}; retry the DELETE")
    if call.path == CONFIG_PATH and answer.status == 200:
        base = str(request.base_url).rstrip("/") + f"/iceberg/{catalog}"
        answer = _kept_on_front_door(answer, base, door.catalog_properties)
    return Response(answer.body, status_code=answer.status, headers=answer.headers)


def _admitted(request: Request, catalog: str, call: Call) -> Door | Response:
    """The call's context, or the spec's error for a catalog not served or a caller not allowed."""
    settings: ApiSettings = request.app.state.settings
    policy = settings.front_door.get(catalog)
    if policy is None:
        return iceberg_error(404, "NotFoundException", f"the front door serves no catalog {catalog!r}")
    catalogs: CatalogRegistry = request.app.state.catalogs
    try:
        properties = catalogs.properties(catalog)
        if properties is None:
            raise UpstreamConfigError(f"catalog {catalog!r} is not configured (PyIceberg config) on this API")
        upstream = Upstream.of(catalog, properties)
    except UpstreamConfigError as error:
        return iceberg_error(503, "ServiceUnavailableException", str(error))
    client = request.app.state.front_door_client
    if policy.auth is FrontDoorAuth.PASS_THROUGH:
        # The upstream authorizes every call, with the caller's own credentials.
        return Door(catalog, policy, upstream, UPSTREAM_AUTHORIZED, client, properties)
    try:
        caller = principal(request, call.headers.get("authorization"))
    except HTTPException as refused:
        return iceberg_error(refused.status_code, "NotAuthorizedException", str(refused.detail))
    role = Role.READ if call.method in _READS else Role.DROP
    if not caller.may(role, catalog):
        return iceberg_error(
            403, "ForbiddenException", f"token {caller.name!r} may not {role.value} {catalog!r}"
        )
    return Door(catalog, policy, upstream, caller.name, client, properties)


def _raw_path(request: Request) -> str:
    """The path after /iceberg/<catalog>/, as the client encoded it (namespaces hold %1F)."""
    raw = request.scope.get("raw_path", b"").decode("latin-1")
    parts = raw.split("/", 3)
    return parts[3] if len(parts) == 4 else ""


def _purge_drop(catalog: str, call: Call, policy: FrontDoorPolicy) -> TableId | None:
    """The table of a DELETE with purgeRequested=true (or without it, where the policy says so),
    else None."""
    if call.method != "DELETE":
        return None
    found = _TABLE_PATH.match(call.path)
    said = parse_qs(call.query).get("purgeRequested")
    requested = said[-1].lower() == "true" if said else policy.purge_unspecified_drops
    if found is None or not requested:
        return None
    return TableId(catalog, unquote(found["namespace"]).split(NAMESPACE_SEPARATOR), unquote(found["table"]))


async def _drop(request: Request, door: Door, call: Call, table: TableId) -> Response:
    temporal: TemporalConnection = request.app.state.temporal
    purges = await temporal.purges()
    if door.as_caller and not door.policy.dry_run_only:
        return await _drop_as_caller(purges, door, call, table)
    if door.policy.dry_run_only:
        rehearsal = await rehearse_drop(purges, table, f"front-door:{door.caller}", door.policy)
        answer = await door.send(call)
        return Response(
            answer.body, status_code=answer.status, headers={**answer.headers, PURGE_ID_HEADER: rehearsal}
        )
    return await _drop_as_service(purges, door, call, table)


async def _drop_as_service(purges: PurgeClient, door: Door, call: Call, table: TableId) -> Response:
    """Service mode: icepurge drops the table itself, through its purge by name."""
    exists = await door.send(Call("HEAD", call.path, headers=call.headers))
    if exists.status == 404:
        gone = await dropped_by_its_purge(purges, table, door.policy)
        if gone is None:
            return iceberg_error(404, "NoSuchTableException", f"table {table.dotted} does not exist")
        if not gone.dropped:
            return iceberg_error(gone.code, gone.error_type, gone.message, {PURGE_ID_HEADER: gone.purge_id})
        return Response(status_code=204, headers={PURGE_ID_HEADER: gone.purge_id})
    outcome = await drop_with_purge(purges, table, f"front-door:{door.caller}", door.policy)
    headers = {PURGE_ID_HEADER: outcome.purge_id}
    if not outcome.dropped:
        return iceberg_error(outcome.code, outcome.error_type, outcome.message, headers)
    # The purge id is the identifier's: a purge still running for a table that had the name
    # before answers "dropped" for a table it never touched.
    if (await door.send(Call("HEAD", call.path, headers=call.headers))).status != 404:
        return iceberg_error(
            503,
            "ServiceUnavailableException",
            f"purge {outcome.purge_id} dropped an earlier table named {table.dotted} and is still "
            "running; this one was not dropped: retry the DELETE once that purge closes",
            headers,
        )
    return Response(status_code=204, headers=headers)


async def _drop_as_caller(purges: PurgeClient, door: Door, call: Call, table: TableId) -> Response:
    """Pass-through: the upstream's refusal comes back as it is, with nothing dropped or deleted."""
    outcome, purge_id = await drop_as_caller(purges, door, call, table)
    headers = {PURGE_ID_HEADER: purge_id} if purge_id else {}
    if isinstance(outcome, Forwarded):
        return Response(outcome.body, status_code=outcome.status, headers={**outcome.headers, **headers})
    if outcome.dropped:
        return Response(status_code=204, headers=headers)
    return iceberg_error(outcome.code, outcome.error_type, outcome.message, headers)


def _with_warehouse(call: Call, upstream: Upstream) -> Call:
    """A config call that names no warehouse gets the upstream's configured one."""
    if call.path != CONFIG_PATH or "warehouse" in parse_qs(call.query) or not upstream.warehouse:
        return call
    query = "&".join(filter(None, [call.query, urlencode({"warehouse": upstream.warehouse})]))
    return Call(call.method, call.path, query, call.headers, call.body)


def _kept_on_front_door(answer: Forwarded, base: str, catalog_properties: dict[str, str]) -> Forwarded:
    """The upstream's config with `uri` overridden to the front door: a client that applies the
    overrides stays here instead of going around it. Where the upstream names no store endpoint
    or region (SeaweedFS's doesn't), the front door's own for the catalog come as defaults, as a
    catalog that knows its store hands them: a client then writes with its credentials alone.
    Credentials never: a caller brings its own, or gets them vended per table."""
    config = json.loads(answer.body)
    config.setdefault("overrides", {})["uri"] = base
    defaults = config.setdefault("defaults", {})
    for key in STORE_SETTINGS_SHOWN:
        if key in catalog_properties and key not in defaults and key not in config["overrides"]:
            defaults[key] = catalog_properties[key]
    body = json.dumps(config).encode()
    return Forwarded(answer.status, body, {**answer.headers, "content-type": "application/json"})
