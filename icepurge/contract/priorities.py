"""Where a purge stands in the task queues (Temporal's Task Queue Priority and Fairness): a bulk
purge's whole tree (its batches, its table purges and their activities inherit the start's
priority and task queue) runs on a queue of its own, so single-table purges keep every slot of
theirs; it yields to them where both share a queue, and bulk purges share the fleet by fairness
key."""

from __future__ import annotations

from typing import Final

from temporalio.common import Priority

# Temporal's default priority key is 3 (1 runs first, 5 last): single-table purges keep it.
BULK_PRIORITY_KEY: Final = 4
BULK_QUEUE_SUFFIX: Final = "-bulk"


def bulk_queue(task_queue: str) -> str:
    """The task queue a namespace purge (and so its whole tree) runs on: the workers poll it
    beside `task_queue` with activity slots of its own."""
    return task_queue if task_queue.endswith(BULK_QUEUE_SUFFIX) else task_queue + BULK_QUEUE_SUFFIX


def bulk_priority(catalog: str, tenant: str | None) -> Priority:
    """The tenant's key, else the catalog's: two catalogs' bulk purges are dispatched in turn
    (where the server enables fairness) rather than first come, first served."""
    return Priority(priority_key=BULK_PRIORITY_KEY, fairness_key=tenant or catalog)
