"""`icepurge doctor`'s checks of what icepurge runs on: Temporal and its search attributes, the
workers and their payload codec, the state location, the catalogs, Spark. Each says in plain
words how to fix what fails. The API runs them with its settings (GET /v1/doctor); the CLI's
--direct mode runs them with its own."""

from __future__ import annotations

import asyncio
import shutil
import socket
import uuid
from contextlib import suppress
from datetime import timedelta
from urllib.parse import urlsplit

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import IndexedValueType, TaskQueueType
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import (
    DeleteWorkflowExecutionRequest,
    DescribeTaskQueueRequest,
    DescribeTaskQueueResponse,
)
from temporalio.client import Client, WorkflowFailureError
from temporalio.service import RPCError

from icepurge.api.server.admin_setup import INDEXED_TYPES
from icepurge.api.server.front_door.policy import FrontDoorAuth
from icepurge.api.server.settings import ApiSettings
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.connection.connect import connect
from icepurge.connection.errors import CodecKeyError, TemporalUnreachableError
from icepurge.connection.rpc_retry import once_more_if_cut
from icepurge.contract.doctor import CheckResult, fail, ok, skipped
from icepurge.contract.names import SEARCH_ATTRIBUTES
from icepurge.contract.priorities import bulk_queue
from icepurge.stores.registry import open_store
from icepurge.stores.store import StoreContext
from icepurge.workflows.shared.echo import ECHO_WORKFLOW_TYPE

STEP_SECONDS = 10.0


async def server_checks(settings: ApiSettings, catalogs: CatalogRegistry) -> list[CheckResult]:
    results: list[CheckResult] = []
    try:
        client = await asyncio.wait_for(connect(settings, warn_plaintext=False), STEP_SECONDS)
    except TemporalUnreachableError as error:
        results.append(fail("temporal", str(error)))
        results += [skipped(name, "needs Temporal") for name in ("search attributes", "workers and codec")]
    except (RuntimeError, OSError, TimeoutError) as error:
        results.append(
            fail(
                "temporal",
                f"can't reach Temporal at {settings.temporal_address} ({type(error).__name__}): start it, "
                "or set ICEPURGE_TEMPORAL_ADDRESS",
            )
        )
        results += [skipped(name, "needs Temporal") for name in ("search attributes", "workers and codec")]
    else:
        results.append(
            ok("temporal", f"{settings.temporal_address}, namespace {settings.temporal_namespace}")
        )
        results.append(await _search_attributes(client, settings.temporal_namespace))
        results.append(await _workers_and_codec(client, settings))
    results.append(await asyncio.to_thread(_state_location, settings))
    results += await _catalogs(catalogs, settings)
    results.append(_spark(settings.spark_master))
    return results


async def _search_attributes(client: Client, namespace: str) -> CheckResult:
    request = ListSearchAttributesRequest(namespace=namespace)
    listed = await once_more_if_cut(lambda: client.operator_service.list_search_attributes(request))
    existing = dict(listed.custom_attributes)
    missing = [name for name, _ in SEARCH_ATTRIBUTES if name not in existing]
    wrong = [
        f"{name} is {_type_name(existing[name])}, not {kind}"
        for name, kind in SEARCH_ATTRIBUTES
        if name in existing and existing[name] != INDEXED_TYPES[kind]
    ]
    if wrong:
        return fail("search attributes", f"{'; '.join(wrong)}: remove them, then run `icepurge admin setup`")
    if missing:
        return fail(
            "search attributes",
            f"missing in {namespace}: {', '.join(missing)}: run `icepurge admin setup`",
        )
    return ok("search attributes", f"all {len(SEARCH_ATTRIBUTES)} registered with their types")


def _type_name(value: IndexedValueType.ValueType) -> str:
    return IndexedValueType.Name(value).removeprefix("INDEXED_VALUE_TYPE_")


async def _pollers(client: Client, settings: ApiSettings, queue: str) -> DescribeTaskQueueResponse:
    request = DescribeTaskQueueRequest(
        namespace=settings.temporal_namespace,
        task_queue=TaskQueue(name=queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    )
    return await once_more_if_cut(lambda: client.workflow_service.describe_task_queue(request))


async def _workers_and_codec(client: Client, settings: ApiSettings) -> CheckResult:
    name = "workers and codec"
    queue = settings.task_queue
    described = await _pollers(client, settings, queue)
    if not described.pollers:
        return fail(name, f"no worker polls task queue {queue!r}: start one (`icepurge worker`)")
    bulk = bulk_queue(queue)
    if not (await _pollers(client, settings, bulk)).pollers:
        return fail(
            name,
            f"no worker polls {bulk!r}, where namespace and catalog purges run: they wait until one "
            "does; run this release's workers (`icepurge worker` polls both queues)",
        )
    probe = f"doctor-{uuid.uuid4()}"
    probe_id = f"icepurge-doctor-{uuid.uuid4()}"
    try:
        echoed = await client.execute_workflow(
            ECHO_WORKFLOW_TYPE,
            probe,
            id=probe_id,
            task_queue=queue,
            result_type=str,
            execution_timeout=timedelta(seconds=STEP_SECONDS),
        )
    except WorkflowFailureError:
        return fail(
            name,
            f"{len(described.pollers)} worker(s) poll {queue!r} but none could open a payload sealed here "
            "within 10 s: give this process the workers' ICEPURGE_CODEC_KEYS (or the workers this one's)",
        )
    except (KeyError, CodecKeyError) as error:
        return fail(
            name,
            f"the workers seal payloads this process can't open ({error}): set ICEPURGE_CODEC_KEYS as on "
            "the workers",
        )
    finally:
        await _forget(client, settings.temporal_namespace, probe_id)
    if echoed != probe:
        return fail(name, "a worker answered with another payload: check the workers' version")
    sealing = "sealed" if settings.payload_codec() else "UNSEALED (no ICEPURGE_CODEC_KEYS on either side)"
    return ok(name, f"{len(described.pollers)} worker(s) on {queue!r}; a {sealing} payload round-tripped")


async def _forget(client: Client, namespace: str, workflow_id: str) -> None:
    """The probe leaves no workflow in the Web UI's list or `temporal workflow list`; a server
    that refuses the delete leaves a closed probe behind, nothing worse."""
    with suppress(RPCError):
        await client.workflow_service.delete_workflow_execution(
            DeleteWorkflowExecutionRequest(
                namespace=namespace, workflow_execution=WorkflowExecution(workflow_id=workflow_id)
            )
        )


def _state_location(settings: ApiSettings) -> CheckResult:
    name = "state location"
    if not settings.state_location:
        return skipped(name, "ICEPURGE_STATE_LOCATION unset here: set it as on the workers to check it")
    uri = f"{settings.state_location.rstrip('/')}/doctor/{uuid.uuid4()}.txt"
    probe = uuid.uuid4().bytes
    try:
        # The store layer, as the workers reach it.
        store = open_store(uri, StoreContext(settings.state_io_properties))
        store.write(uri, probe)
        read = store.read(uri)
        store.delete(uri)
    except Exception as error:
        return fail(
            name,
            f"{settings.state_location}: {type(error).__name__}: {str(error)[:200]}; check the location and "
            "ICEPURGE_STATE_IO_PROPERTIES (credentials, endpoint)",
        )
    if read != probe:
        return fail(name, f"{settings.state_location} gave back other bytes than were written")
    return ok(name, f"{settings.state_location}: written, read back and deleted")


async def _catalogs(catalogs: CatalogRegistry, settings: ApiSettings) -> list[CheckResult]:
    if not catalogs.names():
        return [skipped("catalogs", "none configured here (PyIceberg config or PYICEBERG_CATALOG__*)")]
    callers_own = {
        name.lower()
        for name, policy in settings.front_door.items()
        if policy.auth is FrontDoorAuth.PASS_THROUGH
    }
    return [
        skipped(
            f"catalog {name}",
            "the front door serves it in pass-through mode: each caller's own credentials reach it, "
            "this API holds none to check it with",
        )
        if name in callers_own
        else await _catalog(catalogs, name)
        for name in catalogs.names()
    ]


async def _catalog(catalogs: CatalogRegistry, name: str) -> CheckResult:
    check = f"catalog {name}"
    try:
        namespaces = await asyncio.wait_for(
            asyncio.to_thread(lambda: catalogs.catalog(name).list_namespaces()), STEP_SECONDS
        )
    except Exception as error:
        reason = catalogs.redact(f"{type(error).__name__}: {error}")[:200]
        return fail(check, f"{reason}; check its PyIceberg properties (uri, credentials)")
    return ok(check, f"reachable, {len(namespaces)} top-level namespace(s)")


def _spark(master: str | None) -> CheckResult:
    if not master:
        return skipped("spark", "no ICEPURGE_SPARK_MASTER here: the workers purge with the local engine")
    if master.startswith("local"):
        if shutil.which("java") is None:
            return fail("spark", f"{master} needs Java 17 on the PATH")
        return ok("spark", f"{master}: Java found")
    parts = urlsplit(master)
    if parts.scheme not in ("spark", "sc") or not parts.hostname or not parts.port:
        return skipped("spark", f"{master}: only local, spark:// and sc:// masters are checked")
    return _reachable(parts.hostname, parts.port, master)


def _reachable(host: str, port: int, master: str) -> CheckResult:
    try:
        with socket.create_connection((host, port), timeout=STEP_SECONDS):
            return ok("spark", f"{master} accepts connections")
    except OSError as error:
        return fail("spark", f"{master} refuses or can't be reached ({error}); start it or fix the address")
