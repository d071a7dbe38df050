"""How a failure's reason reads wherever it is shown: status, report, listings, the CLI."""


def typed_reason(reason: str, error_type: str | None) -> str:
    """ "type: message", once, whether or not the message already begins with its type."""
    return reason if not error_type or reason.startswith(error_type) else f"{error_type}: {reason}"


# A memo keeps this much of a reason: a listing shows it in a column.
MEMO_TEXT_LIMIT = 300


def shortened(reason: str, limit: int = MEMO_TEXT_LIMIT) -> str:
    """A reason within `limit` characters. What it says to do comes last ("…; check s3.endpoint,
    the region and the credentials in file_io_properties"), so the long middle (a path, a URL)
    gives way: two fifths of the room go to the end."""
    if len(reason) <= limit:
        return reason
    gap = " … "
    tail = limit * 2 // 5
    return f"{reason[: limit - tail - len(gap)]}{gap}{reason[-tail:]}"


def waiting_reason(step: str, attempt: int, last_error: str | None) -> str:
    """What a purge retrying a step waits for, as `list`, `watch` and the Web UI show it."""
    return f"retrying {step} (attempt {attempt}): {last_error or 'no error recorded'}"


def closed_start_note(purge_id: str, state: str) -> str:
    """What a start that found its purge already closed says: it changed nothing, and how to run
    that purge again."""
    if state == "SUCCEEDED":
        return f"purge {purge_id} already SUCCEEDED for this request; this start changed nothing"
    return (
        f"purge {purge_id} already closed {state}; this start changed nothing. Run it again with "
        f"`icepurge purge rerun {purge_id}` (--file-io-properties FILE for fixed credentials; "
        f"HTTP: POST /v1/purges/{purge_id}/rerun)"
    )


def already_gone_note(already_missing: int, storage_deleted_by_catalog: bool) -> str | None:
    """What a purge's counts don't say by themselves: files it found gone, and why."""
    if not already_missing:
        return None
    why = (
        "the catalog deleted the table's storage on drop"
        if storage_deleted_by_catalog
        else "deleted before the purge reached them"
    )
    return f"{already_missing} already gone — {why}"
