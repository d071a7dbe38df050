"""How long a table purge's workflow task may run before the server gives it to another worker.

Temporal's default is 10 s. A purge's tasks take milliseconds (a replay after a worker's death,
tens of them); one running the hold's first attempt (a local activity) is kept alive by the SDK
past this. A worker killed inside a task costs this long: for a held drop, the time between the
catalog's rename and the purge recording it, while the caller's retry is told to wait."""

from datetime import timedelta

TABLE_PURGE_TASK_TIMEOUT = timedelta(seconds=5)
