"""Runs the real `icepurge` command line against the test stack."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping

from icepurge.contract.names import WORKFLOW_TYPE
from icepurge.devstack.binaries import binary
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import bearer


async def icepurge(stack: EmbeddedStack, *args: str, **extra_env: str) -> tuple[int, str, str]:
    """The CLI in direct mode: Temporal's address and the codec key, as an admin has them."""
    env = {
        "ICEPURGE_CLI_DIRECT": "true",
        "ICEPURGE_TEMPORAL_ADDRESS": stack.temporal_address,
        "ICEPURGE_TASK_QUEUE": "icepurge-tests",
        "ICEPURGE_CODEC_KEYS": json.dumps(stack.codec_keys),
    }
    return await run_cli(args, {**env, **extra_env})


async def icepurge_over_api(api_url: str, *args: str, **extra_env: str) -> tuple[int, str, str]:
    """The CLI as an operator runs it: the API's URL and a token, nothing of Temporal's."""
    return await run_cli(args, {"ICEPURGE_API_URL": api_url, **extra_env})


async def run_cli(
    args: tuple[str, ...], env: dict[str, str], interpreter_flags: tuple[str, ...] = ()
) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *interpreter_flags,
        "-m",
        "icepurge.api.cli.main",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**env, "PATH": "/usr/bin:/bin", "COLUMNS": "120"},
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=180)
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()


async def temporal_cli(stack: EmbeddedStack, *args: str) -> str:
    """Runs the real `temporal` CLI without blocking the event loop the in-process worker polls on."""
    process = await asyncio.create_subprocess_exec(
        binary("temporal"),
        *args,
        "--address",
        stack.temporal_address,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, stderr.decode()
    return stdout.decode()


def codec_arguments(api_url: str) -> list[str]:
    """The temporal CLI's flags to seal and read payloads through the API's codec server."""
    return ["--codec-endpoint", f"{api_url}/codec", "--codec-auth", bearer("admin")["Authorization"]]


async def start_with_temporal_cli(
    stack: EmbeddedStack, api_url: str, purge_id: str, document: Mapping[str, object]
) -> None:
    """`temporal workflow start` of a PurgeTable, sealed through the API's codec server."""
    await temporal_cli(
        stack,
        "workflow", "start",
        "--type", WORKFLOW_TYPE,
        "--task-queue", "icepurge-tests",
        "--workflow-id", purge_id,
        "--id-conflict-policy", "UseExisting",
        "--input", json.dumps(document),
        *codec_arguments(api_url),
    )  # fmt: skip
