"""An activity implements a Step (icepurge.contract.activity_steps): registered under the step's
name, and mypy checks that it takes the step's input and returns its result."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from temporalio import activity

from icepurge.contract.activity_steps import Input, Result, Step

Owner = TypeVar("Owner")


def implements(
    step: Step[Input, Result],
) -> Callable[[Callable[[Owner, Input], Result]], Callable[[Owner, Input], Result]]:
    def register(method: Callable[[Owner, Input], Result]) -> Callable[[Owner, Input], Result]:
        return activity.defn(name=step.name)(method)

    return register
