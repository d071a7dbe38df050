"""The cores this process may use: its CPU affinity, and within a container its cgroup's CPU
quota (Kubernetes' CPU limit), which the affinity does not show."""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def usable_cores(cpu_max: Path = CGROUP_CPU_MAX) -> int:
    cores = len(os.sched_getaffinity(0))
    try:
        quota, period = cpu_max.read_text().split()
    except (OSError, ValueError):
        return cores
    if quota == "max":
        return cores
    return max(1, min(cores, math.ceil(int(quota) / int(period))))
