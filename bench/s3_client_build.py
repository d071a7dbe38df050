"""What a fresh Python process (a Spark Python worker's first task) pays to build the two S3
clients a chunk task uses (the state store's and the deletes'), cold and after
`load_s3_model()` ran in that process (as Spark's warm-up job now does). Each figure is the
median of fresh processes, so imports and botocore's data are never cached in between.

    .venv/bin/python -m bench.s3_client_build --runs 7
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

from icepurge.connection.exit_now import run_then_exit

_PROBE = """
import time
from icepurge.stores.s3_client import load_s3_model, s3_client
if {warm}:
    load_s3_model()
started = time.perf_counter()
properties = {{"s3.endpoint": "http://127.0.0.1:9", "s3.access-key-id": "a", "s3.secret-access-key": "b"}}
s3_client(properties, max_connections=16, max_attempts=3)
s3_client(properties, max_connections=10, max_attempts=1)
print(time.perf_counter() - started)
"""


def two_clients_seconds(warm: bool) -> float:
    probe = _PROBE.format(warm=warm)
    answer = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return float(answer.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    for warm, label in ((False, "cold"), (True, "after load_s3_model()")):
        seconds = [two_clients_seconds(warm) for _ in range(args.runs)]
        print(
            f"two S3 clients in a fresh process, {label}: median {statistics.median(seconds):.3f} s"
            f" (min {min(seconds):.3f}, max {max(seconds):.3f}, {args.runs} processes)"
        )


if __name__ == "__main__":
    run_then_exit(main)
