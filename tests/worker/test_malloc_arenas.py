"""The worker's threads share the few malloc arenas its setting allows, where glibc would give
them up to 8 a core."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

_THREADS_MALLOC = textwrap.dedent(
    """
    import ctypes, sys, tempfile, threading
    from icepurge.worker.malloc_arenas import limit_malloc_arenas

    most = int(sys.argv[1])
    if most:
        assert limit_malloc_arenas(most)
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    start = threading.Barrier(32)

    def allocate():
        start.wait()
        for _ in range(2000):
            block = libc.malloc(4096)
            libc.free(block)

    threads = [threading.Thread(target=allocate) for _ in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with tempfile.NamedTemporaryFile(suffix=".xml") as info:
        stream = libc.fopen(info.name.encode(), b"w")
        libc.malloc_info(0, stream)
        libc.fclose(stream)
        print(open(info.name).read().count("<heap nr="))
    """
)


def _arenas(most: int) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _THREADS_MALLOC, str(most)], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc arenas are glibc's")
def test_threads_share_the_arenas_the_setting_allows() -> None:
    assert _arenas(2) <= 2
    # Without the limit the same threads take more, or the test above shows nothing.
    assert _arenas(0) > 2
