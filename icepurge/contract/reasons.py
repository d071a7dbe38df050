"""How a failure's reason reads wherever it is shown: status, report, listings, the CLI."""


def typed_reason(reason: str, error_type: str | None) -> str:
    """ "type: message", once, whether or not the message already begins with its type."""
    return reason if not error_type or reason.startswith(error_type) else f"{error_type}: {reason}"
