"""Where a Spark chunk's time goes, next to the local engine's: one table purged by each engine
on the same stack; for Spark, each chunk activity's span against its job's span (Spark's own
REST API: submission to completion) and its tasks' launch delay, deserialization and run time.

    .venv/bin/python -m bench.spark_chunk_profile --files 6000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import urllib.request
import uuid
from datetime import datetime
from typing import Any

from bench.bench_stack import bench_stack
from bench.bench_stores import S3BenchStore
from bench.compare_engines import FILES_PER_MANIFEST, LOCAL_QUEUE, SNAPSHOTS, SPARK_QUEUE
from bench.purge_timeline import planning_step, purge_timeline
from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.connect import connect
from icepurge.connection.exit_now import run_then_exit
from icepurge.contract.names import CHUNK_ACTIVITY, FINALIZE_ACTIVITY
from icepurge.devstack.free_ports import free_ports
from icepurge.devstack.process import WORKER_READY
from icepurge.devstack.requests import request_for_table
from icepurge.devstack.stack import EmbeddedStack
from icepurge.devstack.synthetic_table import TableShape, synthetic_table


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:  # loopback Spark UI
        return json.load(answer)


def _at(text: str) -> datetime:
    return datetime.strptime(text.replace("GMT", ""), "%Y-%m-%dT%H:%M:%S.%f")


def _spark_jobs(ui: str) -> None:
    application = _get(f"{ui}/api/v1/applications")[0]["id"]
    jobs = sorted(_get(f"{ui}/api/v1/applications/{application}/jobs"), key=lambda job: job["jobId"])
    for job in jobs:
        if "completionTime" not in job or job["numTasks"] == 0:
            continue
        submitted, completed = _at(job["submissionTime"]), _at(job["completionTime"])
        tasks: list[dict[str, Any]] = []
        for stage in job["stageIds"]:
            for attempt in _get(f"{ui}/api/v1/applications/{application}/stages/{stage}?details=true"):
                tasks += attempt.get("tasks", {}).values()
        launch = max((_at(task["launchTime"]) - submitted).total_seconds() for task in tasks)
        deserialize = max(task["taskMetrics"]["executorDeserializeTime"] for task in tasks) / 1000
        run = max(task["taskMetrics"]["executorRunTime"] for task in tasks) / 1000
        print(
            f"  job {job['jobId']} ({job['name'][:40]}): {(completed - submitted).total_seconds():.2f} s,"
            f" {len(tasks)} task(s): launched after {launch:.2f} s, deserialize {deserialize:.2f} s,"
            f" run {run:.2f} s (longest)"
        )


async def _purge(stack: EmbeddedStack, store: S3BenchStore, table: Any, engine: str) -> str:
    temporal = await connect(stack.temporal_settings())
    client = PurgeClient(temporal, SPARK_QUEUE if engine == "spark" else LOCAL_QUEUE)
    request = request_for_table(f"profile-{engine}", table, store.properties, "bench", engine=engine)
    purge_id = await client.start(request)
    await client.wait(purge_id)
    timeline = await purge_timeline(temporal, purge_id)
    print(
        f"{engine}: total {timeline.total:.2f} s; plan {timeline.seconds(planning_step(timeline)):.2f} s,"
        f" chunks {timeline.seconds(CHUNK_ACTIVITY):.2f} s,"
        f" finalize {timeline.seconds(FINALIZE_ACTIVITY):.2f} s"
    )
    for start, end in sorted(timeline.spans.get(CHUNK_ACTIVITY, [])):
        print(f"  chunk activity: {(end - start).total_seconds():.2f} s")
    return purge_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=6_000)
    args = parser.parse_args()
    with bench_stack("icepurge-bench-") as (_, stack):
        ui_port = free_ports(1)[0]
        workers = [
            stack.worker_process("profile-local", ICEPURGE_TASK_QUEUE=LOCAL_QUEUE),
            stack.worker_process(
                "profile-spark",
                ICEPURGE_TASK_QUEUE=SPARK_QUEUE,
                ICEPURGE_SPARK_MASTER="local[2,4]",
                ICEPURGE_SPARK_CONF=json.dumps({"spark.ui.enabled": "true", "spark.ui.port": str(ui_port)}),
            ),
        ]
        try:
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.wait_for_log(WORKER_READY)
            store = S3BenchStore(stack)
            shape = TableShape(
                manifests=args.files // FILES_PER_MANIFEST,
                files_per_manifest=FILES_PER_MANIFEST,
                snapshots=SNAPSHOTS,
            )
            for engine in ("local", "spark"):
                identifier = ("bench", f"profile_{engine}_{uuid.uuid4().hex[:6]}")
                table = synthetic_table(store.catalog, identifier, shape, write_objects=store.write_objects)
                asyncio.run(_purge(stack, store, table, engine))
            print("spark jobs (the warm-up first):")
            _spark_jobs(f"http://127.0.0.1:{ui_port}")
        finally:
            for worker in workers:
                worker.stop()


if __name__ == "__main__":
    run_then_exit(main)
