"""Spark services started from PySpark's own scripts: a standalone Master and Worker
(`spark-class`), and a Spark Connect server (`spark-submit` of SparkConnectServer). Loopback
by default; for trying the cluster set-ups on one machine (docs/operations/deployment.md, "The
Spark engine"), or on a test's own hosts, each bound to its host's address."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from icepurge.devstack.process import ServiceProcess
from icepurge.worker.spark_session import REDACTION_REGEX

_CONNECT_SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"


def _spark_script(name: str) -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / name)


def _environment(work_dir: Path, host: str = "127.0.0.1") -> dict[str, str]:
    return {
        # Executors and the Connect server start their Python workers with this interpreter.
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": host,
        "SPARK_LOG_DIR": str(work_dir / "logs"),
        "SPARK_WORKER_DIR": str(work_dir / "work"),
    }


@dataclass(frozen=True)
class SparkHost:
    """Where a standalone service runs: its address, and the command prefix that puts it on its
    host (none: this one)."""

    address: str = "127.0.0.1"
    prefix: tuple[str, ...] = ()


def standalone_master(
    work_dir: Path, port: int, ui_port: int, host: SparkHost = SparkHost(), master_opts: str = ""
) -> ServiceProcess:
    """`master_opts`: SPARK_MASTER_OPTS (`-Dspark.worker.timeout=…`)."""
    command = [
        *host.prefix,
        _spark_script("spark-class"),
        "org.apache.spark.deploy.master.Master",
        "--host", host.address,
        "--port", str(port),
        "--webui-port", str(ui_port),
    ]  # fmt: skip
    environment = {**_environment(work_dir, host.address), "SPARK_MASTER_OPTS": master_opts}
    return ServiceProcess("spark-master", command, work_dir / "logs" / "master.log", environment)


def standalone_worker(
    work_dir: Path,
    master: str,
    ui_port: int,
    cores: int,
    host: SparkHost = SparkHost(),
) -> ServiceProcess:
    """`master`: its spark:// URL."""
    command = [
        *host.prefix,
        _spark_script("spark-class"),
        "org.apache.spark.deploy.worker.Worker",
        master,
        "--host", host.address,
        "--cores", str(cores),
        "--memory", "2g",
        "--webui-port", str(ui_port),
        "--work-dir", str(work_dir / "work"),
    ]  # fmt: skip
    return ServiceProcess(
        f"spark-worker-{host.address}",
        command,
        work_dir / "logs" / "worker.log",
        _environment(work_dir, host.address),
    )


def connect_server(
    work_dir: Path, port: int, master: str, conf: dict[str, str] | None = None
) -> ServiceProcess:
    """A Connect server with icepurge's server-side settings (FAIR, redaction, retries)."""
    settings = {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.scheduler.mode": "FAIR",
        "spark.redaction.regex": REDACTION_REGEX,
        "spark.pyspark.python": sys.executable,
        "spark.task.maxFailures": "4",
        **(conf or {}),
    }
    command = [_spark_script("spark-submit"), "--class", _CONNECT_SERVER, "--master", master]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    command.append("spark-internal")
    return ServiceProcess("spark-connect", command, work_dir / "logs" / "connect.log", _environment(work_dir))
