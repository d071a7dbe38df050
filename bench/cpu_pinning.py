"""Splits this machine's cores between a benchmark's client side and the services it measures: the
store and the Temporal server on cores of their own, as they would run on machines of their own,
and this process (with every worker it starts later, which inherit its affinity) on the rest."""

from __future__ import annotations

import argparse
import os

import psutil


def _pin(process: psutil.Process, cpus: set[int]) -> None:
    """Every thread the process has now; threads it starts later inherit their creator's."""
    for thread in process.threads():
        os.sched_setaffinity(thread.id, cpus)


def pin_services(service_cpus: set[int]) -> str:
    """Pins this process's children now running (the stack's services, started before anything
    else) to `service_cpus`, and this process to the other cores; says what went where."""
    every = set(range(os.cpu_count() or 1))
    client_cpus = every - service_cpus
    if not service_cpus or not service_cpus < every:
        raise ValueError(f"give the services some of the cores {sorted(every)}, not all of them")
    me = psutil.Process()
    services = me.children(recursive=True)
    for service in services:
        _pin(service, service_cpus)
    _pin(me, client_cpus)
    names = ", ".join(sorted({service.name() for service in services}))
    return (
        f"services ({names}) on cores {sorted(service_cpus)}; "
        f"this process and its workers on {sorted(client_cpus)}"
    )


def add_service_cpus_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--service-cpus",
        type=int,
        nargs="*",
        default=[],
        help="cores for the store and the Temporal server alone; this process and its workers take the rest",
    )


def pin_services_if_asked(service_cpus: list[int]) -> None:
    """`--service-cpus`: the services pinned there, and where everything went printed."""
    if service_cpus:
        print(pin_services(set(service_cpus)), flush=True)
