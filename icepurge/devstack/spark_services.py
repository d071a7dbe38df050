"""Spark services started from PySpark's own scripts: a standalone Master and Worker
(`spark-class`), and a Spark Connect server (`spark-submit` of SparkConnectServer). Loopback
only; for trying the cluster set-ups on one machine (README: "Spark engine")."""

from __future__ import annotations

import sys
from pathlib import Path

from icepurge.devstack.process import ServiceProcess
from icepurge.worker.spark_session import REDACTION_REGEX

_CONNECT_SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"


def _spark_script(name: str) -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / name)


def _environment(work_dir: Path) -> dict[str, str]:
    return {
        # Executors and the Connect server start their Python workers with this interpreter.
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(work_dir / "logs"),
        "SPARK_WORKER_DIR": str(work_dir / "work"),
    }


def standalone_master(work_dir: Path, port: int, ui_port: int) -> ServiceProcess:
    command = [
        _spark_script("spark-class"),
        "org.apache.spark.deploy.master.Master",
        "--host", "127.0.0.1",
        "--port", str(port),
        "--webui-port", str(ui_port),
    ]  # fmt: skip
    return ServiceProcess("spark-master", command, work_dir / "logs" / "master.log", _environment(work_dir))


def standalone_worker(work_dir: Path, master_port: int, ui_port: int, cores: int) -> ServiceProcess:
    command = [
        _spark_script("spark-class"),
        "org.apache.spark.deploy.worker.Worker",
        f"spark://127.0.0.1:{master_port}",
        "--host", "127.0.0.1",
        "--cores", str(cores),
        "--memory", "2g",
        "--webui-port", str(ui_port),
        "--work-dir", str(work_dir / "work"),
    ]  # fmt: skip
    return ServiceProcess("spark-worker", command, work_dir / "logs" / "worker.log", _environment(work_dir))


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
