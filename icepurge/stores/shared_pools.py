"""The idle connections a process's shared clients keep. Each client (boto3's, the signed
DeleteObjects sender, obstore's, Azure's, GCS's) is shared by every step of the process that
talks to the same store with the same properties, so its pool must hold connections for all of
those steps at once, not for the one that built it. Sized by one step's concurrency, the deletes
of a namespace purge's 64 tables in flight overflowed a pool of 10: at 10^4 small tables, 0.72
connections a table were closed after one request, each with urllib3's "Connection pool is full"
WARNING, and opened again (with TLS, on a real store) by the next request."""

from __future__ import annotations

# Enough for the most requests a worker has in flight to one store (its activity slots' tables,
# each step's requests at once); an idle connection costs a socket until the store closes it.
SHARED_POOL_CONNECTIONS = 128


def pooled_connections(asked: int) -> int:
    """The pool size of a shared client built for a caller that sends `asked` requests at once."""
    return max(asked, SHARED_POOL_CONNECTIONS)
