"""Retry waits with full jitter: callers retrying at once don't retry in step."""

from __future__ import annotations

import random


def full_jitter(attempt: int, base: float, cap: float) -> float:
    """Seconds to wait, uniform in [0, min(cap, base x 2^attempt)]."""
    return random.uniform(0, min(cap, base * 2**attempt))
