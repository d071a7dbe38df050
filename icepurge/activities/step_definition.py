"""An activity implements a Step (icepurge.contract.activity_steps): registered under the step's
name, and mypy checks that it takes the step's input and returns its result. A step on a pulse
beats while it runs; every step's writes to the state location are fenced by its attempt."""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import nullcontext
from typing import TypeVar

from temporalio import activity

from icepurge.activities.heartbeats import pulsing
from icepurge.contract.activity_steps import Input, Result, Step
from icepurge.state.attempt_fence import fenced

Owner = TypeVar("Owner")


def implements(
    step: Step[Input, Result],
) -> Callable[[Callable[[Owner, Input], Result]], Callable[[Owner, Input], Result]]:
    def register(method: Callable[[Owner, Input], Result]) -> Callable[[Owner, Input], Result]:
        @functools.wraps(method)
        def attempt(owner: Owner, argument: Input) -> Result:
            with fenced(), pulsing() if step.pulse else nullcontext():
                return method(owner, argument)

        return activity.defn(name=step.name)(attempt)

    return register
