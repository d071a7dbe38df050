"""The multi-process worker's parts that need no process: merging metrics, counting cores."""

from __future__ import annotations

from pathlib import Path

from icepurge.worker.cpu_cores import usable_cores
from icepurge.worker.metrics_merge import merge_metrics

ONE = """# HELP requests Requests.
# TYPE requests counter
requests{kind="get"} 3
requests 1
# HELP latency Latency.
# TYPE latency histogram
latency_bucket{le="1"} 2
latency_sum 0.5
latency_count 2
"""


def test_each_family_stays_one_group_and_each_sample_says_its_process() -> None:
    merged = merge_metrics({"0": ONE, "1": ONE.replace(" 3", " 7")}).splitlines()
    assert merged == [
        "# HELP requests Requests.",
        "# TYPE requests counter",
        'requests{worker_process="0",kind="get"} 3',
        'requests{worker_process="0"} 1',
        'requests{worker_process="1",kind="get"} 7',
        'requests{worker_process="1"} 1',
        "# HELP latency Latency.",
        "# TYPE latency histogram",
        'latency_bucket{worker_process="0",le="1"} 2',
        'latency_sum{worker_process="0"} 0.5',
        'latency_count{worker_process="0"} 2',
        'latency_bucket{worker_process="1",le="1"} 2',
        'latency_sum{worker_process="1"} 0.5',
        'latency_count{worker_process="1"} 2',
    ]


def test_a_cgroup_cpu_quota_bounds_the_cores(tmp_path: Path) -> None:
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("100000 100000\n")
    assert usable_cores(cpu_max) == 1
    cpu_max.write_text("150000 100000\n")
    assert usable_cores(cpu_max) == min(2, usable_cores(tmp_path / "absent"))
    cpu_max.write_text("max 100000\n")
    assert usable_cores(cpu_max) == usable_cores(tmp_path / "absent") >= 1
