"""What a token may do: the HTTP API's roles, as tokens and the API's answers name them."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    START = "start"
    READ = "read"
    CANCEL = "cancel"
    # Pause, resume and the rate budget.
    CONTROL = "control"
    # Drop a table from its catalog and purge it by name; undrop and expedite a soft delete.
    DROP = "drop"
    # The codec server's decode: shows requests in clear, FileIO credentials included.
    DECODE = "decode"
