"""Optional features say what to install the moment they are asked for, not with an ImportError
deep in a retried step."""

from __future__ import annotations

import importlib.util

from temporalio.exceptions import ApplicationError

ERROR_MISSING_EXTRA = "MissingExtra"


class MissingExtraError(ApplicationError):
    """Not retried: installing the extra, then rerunning the purge, is what fixes it."""

    def __init__(self, feature: str, module: str, extra: str) -> None:
        super().__init__(
            f"{feature} needs {module}, which this process lacks: install icepurge[{extra}] "
            "(pip install 'icepurge[" + extra + "]') where the worker runs, then rerun the purge",
            type=ERROR_MISSING_EXTRA,
            non_retryable=True,
        )


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def require_extra(feature: str, module: str, extra: str) -> None:
    if not installed(module):
        raise MissingExtraError(feature, module, extra)
