"""An activity implements a Step (icepurge.contract.activity_steps): registered under the step's
name, and mypy checks that it takes the step's input and returns its result. A step on a pulse
beats while it runs."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from temporalio import activity

from icepurge.activities.heartbeats import pulsing
from icepurge.contract.activity_steps import Input, Result, Step

Owner = TypeVar("Owner")


def implements(
    step: Step[Input, Result],
) -> Callable[[Callable[[Owner, Input], Result]], Callable[[Owner, Input], Result]]:
    def register(method: Callable[[Owner, Input], Result]) -> Callable[[Owner, Input], Result]:
        if not step.pulse:
            return activity.defn(name=step.name)(method)

        @functools.wraps(method)
        def on_a_pulse(owner: Owner, argument: Input) -> Result:
            with pulsing():
                return method(owner, argument)

        return activity.defn(name=step.name)(on_a_pulse)

    return register
