"""glibc's malloc gives a thread that finds the arenas busy an arena of its own, up to 8 a core,
and an arena keeps the pages its freed blocks sit between. A worker runs hundreds of threads
(activity slots, the shared threads of its pools, the SDK's); at 10^5 tables its RSS rose from
426 to ~550 MiB while Python's own heap grew 1.2 MiB (BENCHMARKS.md), almost all of it in
arenas. Fewer arenas, set before the worker starts its threads, keep the freed pages reusable."""

from __future__ import annotations

import ctypes
import logging

log = logging.getLogger(__name__)
# mallopt's parameter for the most arenas (malloc.h).
_M_ARENA_MAX = -8


def limit_malloc_arenas(most: int) -> bool:
    """True when glibc took the limit; False where malloc is another (musl, macOS)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        log.info("malloc arenas not limited: this C library has no mallopt")
        return False
    return bool(mallopt(_M_ARENA_MAX, most))
