"""Single-object S3 requests through obstore: keys its paths can't name and processes forked after
its runtime started go to boto3; its errors read as boto3's do, down to what config_faults looks
for. No store answers here: the endpoints are closed ports."""

from __future__ import annotations

import os
import socket
import struct
import threading
import time

import pytest
from obstore.exceptions import GenericError

from icepurge.activities.plan.config_faults import is_configuration_fault
from icepurge.devstack.free_ports import free_ports
from icepurge.stores.obstore_runtime import nameable, obstore_errors
from icepurge.stores.s3 import S3Store
from icepurge.stores.s3_objects import Boto3Objects
from icepurge.stores.s3_obstore import S3_CLIENT_VARIABLE, ObstoreObjects, takes_obstore
from icepurge.stores.store import StoreContext
from tests.cli_runner import run_cli

CHILD_SECONDS = 60


def _closed_endpoint() -> dict[str, str]:
    return {
        "s3.endpoint": f"http://127.0.0.1:{free_ports(1)[0]}",
        "s3.access-key-id": "icepurge-test",
        "s3.secret-access-key": "not-a-real-secret",
    }


def test_credentials_in_the_properties_take_obstore_and_the_credential_chain_takes_boto3() -> None:
    assert takes_obstore(_closed_endpoint())
    assert takes_obstore({"client.access-key-id": "a", "client.secret-access-key": "b"})
    assert not takes_obstore({"s3.endpoint": "http://127.0.0.1:9"})
    assert not takes_obstore({"s3.access-key-id": "a"})
    # boto3 puts the bucket in the endpoint's host; obstore would not.
    assert not takes_obstore({**_closed_endpoint(), "s3.force-virtual-addressing": "true"})
    on_aws = {"s3.access-key-id": "a", "s3.secret-access-key": "b", "s3.force-virtual-addressing": "true"}
    assert takes_obstore(on_aws)


def test_the_operator_can_send_every_request_through_boto3_and_a_typo_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(S3_CLIENT_VARIABLE, "boto3")
    assert not takes_obstore(_closed_endpoint())
    monkeypatch.setenv(S3_CLIENT_VARIABLE, "obstor")
    with pytest.raises(ValueError, match=r"'obstor': set obstore \(the default\) or boto3"):
        takes_obstore(_closed_endpoint())


@pytest.mark.parametrize("processes", ["1", "2"])
async def test_a_worker_refuses_to_start_on_an_s3_client_it_does_not_have(processes: str) -> None:
    env = {
        "ICEPURGE_STATE_LOCATION": "file:///tmp/icepurge-never-written",
        "ICEPURGE_TEMPORAL_ADDRESS": f"127.0.0.1:{free_ports(1)[0]}",
        "ICEPURGE_WORKER_PROCESSES": processes,
        S3_CLIENT_VARIABLE: "boto",
    }
    code, _, stderr = await run_cli(("worker",), env)
    assert code == 2, stderr
    assert "ICEPURGE_S3_CLIENT='boto': set obstore (the default) or boto3" in " ".join(stderr.split())
    assert "Traceback" not in stderr


def test_keys_obstore_cannot_name_go_to_boto3() -> None:
    assert nameable("warehouse/t/metadata/00001-a b+c=%2F.metadata.json")
    for key in ("t//metadata/a.json", "/t/a.json", "t/a/", "t/./a", "t/../a"):
        assert not nameable(key), key
    properties = _closed_endpoint()
    objects = ObstoreObjects(properties, 2, 1, Boto3Objects(properties, 2, 1))
    # boto3's words, not obstore's ("Could not parse path … empty path segment" was a ValueError).
    with pytest.raises(OSError, match=r"^EndpointConnectionError: Could not connect"):
        objects.get("warehouse", "t//metadata/a.json")
    with pytest.raises(OSError, match=r"^Could not connect to the endpoint URL for s3://warehouse/t/a\.json"):
        objects.get("warehouse", "t/a.json")


def test_a_closed_endpoint_is_a_configuration_fault_that_names_its_cause() -> None:
    store = S3Store(StoreContext(_closed_endpoint(), attempts=1))
    for request in (
        lambda: store.read("s3://warehouse/t/a.json"),
        lambda: store.write("s3://warehouse/t/a.json", b"x"),
        lambda: store.head("s3://warehouse/t/a.json"),
    ):
        with pytest.raises(OSError) as failed:
            request()
        assert not isinstance(failed.value, PermissionError | FileNotFoundError)
        assert is_configuration_fault(failed.value), failed.value
        assert "Connection refused" in str(failed.value)
        assert "not-a-real-secret" not in str(failed.value)


def test_a_process_forked_after_an_obstore_request_uses_boto3_and_does_not_hang() -> None:
    properties = _closed_endpoint()
    store = S3Store(StoreContext(properties, attempts=1))
    with pytest.raises(OSError, match=r"^Could not connect to the endpoint URL for"):
        store.read("s3://warehouse/t/a.json")
    child = os.fork()
    if child == 0:
        # A forked child's obstore runtime hangs its first request; boto3 answers at once.
        code = 1
        try:
            store.read("s3://warehouse/t/a.json")
        except OSError as error:
            boto3_said = str(error).startswith("EndpointConnectionError")
            code = 0 if boto3_said and not takes_obstore(properties) else 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + CHILD_SECONDS
    while (waited := os.waitpid(child, os.WNOHANG)) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(child, 9)
            os.waitpid(child, 0)
            pytest.fail(f"the forked child's read did not end within {CHILD_SECONDS}s")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(waited[1]) == 0
    assert takes_obstore(properties), "the parent keeps obstore"


def _resetting_endpoint() -> dict[str, str]:
    """A listener that reads each request and resets the connection: the chaos tier's fault."""
    listener = socket.create_server(("127.0.0.1", 0))

    def reset_each() -> None:
        while True:
            connection, _ = listener.accept()
            connection.recv(65536)
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            connection.close()

    threading.Thread(target=reset_each, daemon=True).start()
    return {**_closed_endpoint(), "s3.endpoint": f"http://127.0.0.1:{listener.getsockname()[1]}"}


def test_a_reset_connection_is_transient_not_a_configuration_fault() -> None:
    """Regression: obstore names a reset met while connecting a connect error, and reading every
    one as "Could not connect" made the chaos tier's resets a configuration fault: planning gave
    up after its 300 s budget and the purge failed."""
    store = S3Store(StoreContext(_resetting_endpoint(), attempts=1))
    with pytest.raises(OSError, match="Connection reset by peer") as failed:
        store.read("s3://warehouse/t/a.json")
    assert not is_configuration_fault(failed.value), failed.value
    with (
        pytest.raises(OSError, match="Connection reset by peer") as failed,
        obstore_errors("s3://warehouse/t/a.json"),
    ):
        raise GenericError(RESET_WHILE_CONNECTING)
    assert not is_configuration_fault(failed.value), failed.value


# obstore's text for a reset met while connecting, as the chaos tier's worker logged it.
RESET_WHILE_CONNECTING = """Generic S3 error: Error performing GET http://127.0.0.1:9/t/a.json in 2ms - \
HTTP error: error sending request

Debug source:
Generic {
    store: "S3",
    source: RetryError(
        RetryErrorImpl {
            inner: Http(
                HttpError {
                    kind: Connect,
                    source: reqwest::Error {
                        kind: Request,
                        source: hyper_util::client::legacy::Error(
                            Connect,
                            ConnectError(
                                "tcp connect error",
                                Os {
                                    code: 104,
                                    kind: ConnectionReset,
                                    message: "Connection reset by peer",
                                },
                            ),
                        ),
                    },
                },
            ),
        },
    ),
}"""
