"""Where `make engines` puts the engines and servers the engines tier runs (Iceberg's REST server,
Spark with Iceberg's runtimes, Trino, Nessie): a cache outside git, at ICEPURGE_ENGINES_DIR; and
the newer Java some of them need."""

from __future__ import annotations

import os
from pathlib import Path

from icepurge.devstack.process import ServiceFailedError

DEFAULT = Path.home() / ".cache" / "icepurge" / "engines"
# Trino 476 and Nessie 0.99 need a Java newer than the machine's default 17.
JAVA25_HOME = "/usr/lib/jvm/temurin-25-jdk-amd64"


def engines_root() -> Path:
    return Path(os.environ.get("ICEPURGE_ENGINES_DIR") or DEFAULT)


def engine_dir(name: str) -> Path:
    """The installed engine `name`, or an error saying how to install it."""
    found = engines_root() / name
    if not (found / ".installed").exists():
        raise ServiceFailedError(f"{name} is not installed in {engines_root()}: run `make engines`")
    return found


def java25(server: str) -> str:
    """The `java` of the Java 25 JDK (ICEPURGE_JAVA25_HOME, by default where Temurin 25 is on
    these machines), or an error saying which server needs it and how to point at one."""
    home = Path(os.environ.get("ICEPURGE_JAVA25_HOME", JAVA25_HOME))
    java = home / "bin" / "java"
    if not java.exists():
        raise ServiceFailedError(f"{server} needs Java 25 at {home} (set ICEPURGE_JAVA25_HOME)")
    return str(java)
