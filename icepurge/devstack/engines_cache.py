"""Where `make engines` puts the engines and servers the engines tier runs (Iceberg's REST server,
Spark with Iceberg's runtimes, Trino): a cache outside git, at ICEPURGE_ENGINES_DIR."""

from __future__ import annotations

import os
from pathlib import Path

from icepurge.devstack.process import ServiceFailedError

DEFAULT = Path.home() / ".cache" / "icepurge" / "engines"


def engines_root() -> Path:
    return Path(os.environ.get("ICEPURGE_ENGINES_DIR") or DEFAULT)


def engine_dir(name: str) -> Path:
    """The installed engine `name`, or an error saying how to install it."""
    found = engines_root() / name
    if not (found / ".installed").exists():
        raise ServiceFailedError(f"{name} is not installed in {engines_root()}: run `make engines`")
    return found
