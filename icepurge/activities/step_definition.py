"""An activity implements a Step (icepurge.contract.activity_steps): registered under the step's
name, and mypy checks that it takes the step's input and returns its result. A step on a pulse
beats while it runs; every step's writes to the state location are fenced by its attempt."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from contextlib import nullcontext
from typing import TypeVar

from temporalio import activity

from icepurge.activities.heartbeats import pulsing
from icepurge.contract.activity_steps import Input, Result, Step
from icepurge.state.attempt_fence import fenced

Owner = TypeVar("Owner")

# Every function `implements` made, so a worker finds its activities on their owners' classes
# rather than in a list kept by hand beside them.
_IMPLEMENTATIONS: set[Callable[..., object]] = set()


def implements(
    step: Step[Input, Result],
) -> Callable[[Callable[[Owner, Input], Result]], Callable[[Owner, Input], Result]]:
    def register(method: Callable[[Owner, Input], Result]) -> Callable[[Owner, Input], Result]:
        @functools.wraps(method)
        def attempt(owner: Owner, argument: Input) -> Result:
            with fenced(), pulsing() if step.pulse else nullcontext():
                return method(owner, argument)

        defined = activity.defn(name=step.name)(attempt)
        _IMPLEMENTATIONS.add(defined)
        return defined

    return register


def activities_of(*owners: object) -> list[Callable[..., object]]:
    """The owners' methods that implement a step, bound, in the owners' order, each owner's by name."""
    return [
        getattr(owner, name)
        for owner in owners
        for name in dir(type(owner))
        if inspect.isfunction(member := getattr(type(owner), name)) and member in _IMPLEMENTATIONS
    ]
