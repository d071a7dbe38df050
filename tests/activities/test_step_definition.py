"""A worker registers the activities it finds on their owners: every step's implementation, once,
bound to its owner, and nothing else."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from temporalio import activity

from icepurge.activities.step_definition import _IMPLEMENTATIONS, activities_of, implements
from icepurge.contract import activity_steps
from icepurge.contract.activity_steps import Step
from icepurge.contract.events import DeliveryReport, EventBatch
from icepurge.contract.sweep_steps import SweepInput, SweepResult


class _Owner:
    def __init__(self, answer: int) -> None:
        self.answer = answer

    @implements(activity_steps.SWEEP)
    def sweep(self, step: SweepInput) -> SweepResult:
        raise NotImplementedError

    @implements(activity_steps.DELIVER_EVENTS)
    def deliver(self, step: EventBatch) -> DeliveryReport:
        raise NotImplementedError

    def helper(self) -> int:
        return self.answer

    # Unhashable: the search passes over it.
    answers: ClassVar[dict[str, int]] = {"a": 1}


def _names(methods: Sequence[Callable[..., object]]) -> list[str]:
    return [str(activity._Definition.must_from_callable(method).name) for method in methods]


def test_an_owners_implementations_are_found_bound_in_the_order_of_their_names() -> None:
    first, second = _Owner(1), _Owner(2)

    found = activities_of(first, second)

    assert _names(found) == [activity_steps.DELIVER_EVENTS.name, activity_steps.SWEEP.name] * 2
    assert [method.__self__ for method in found] == [first, first, second, second]  # type: ignore[attr-defined]


def test_every_step_has_one_implementation_among_the_workers_activities() -> None:
    import icepurge.worker.run  # noqa: F401  (imports every owner of the worker's activities)

    steps = sorted(step.name for step in vars(activity_steps).values() if isinstance(step, Step))
    theirs = [function for function in _IMPLEMENTATIONS if not function.__qualname__.startswith("_Owner.")]

    assert sorted(_names(theirs)) == steps
