"""What every catalog step shares: the catalog by name, protection, and errors that leave
redacted and without their cause chain (Temporal keeps failure messages in clear, and a catalog's
error may quote its URI or credentials)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pyiceberg.catalog import Catalog
from temporalio.exceptions import ApplicationError, CancelledError

from icepurge.activities.signals.attempt_reports import reporting_failed_attempts
from icepurge.activities.signals.progress_signals import ProgressSignals
from icepurge.catalogs.admission import CatalogAdmission, CatalogNotAdmittedError
from icepurge.catalogs.configured import CatalogNotConfiguredError, CatalogRegistry
from icepurge.catalogs.kind import CatalogKind
from icepurge.catalogs.registry import kind_of
from icepurge.contract.names import ERROR_CATALOG_NOT_CONFIGURED, ERROR_CATALOG_UNAVAILABLE


class CatalogCalls:
    def __init__(self, registry: CatalogRegistry, signals: ProgressSignals | None = None) -> None:
        self._registry = registry
        self._signals = signals

    @property
    def registry(self) -> CatalogRegistry:
        return self._registry

    def _catalog(self, name: str) -> Catalog:
        try:
            return self._registry.catalog(name)
        except CatalogNotConfiguredError as error:
            raise ApplicationError(
                str(error), type=ERROR_CATALOG_NOT_CONFIGURED, non_retryable=True
            ) from None

    def _kind(self, name: str) -> CatalogKind:
        return kind_of(self._catalog(name))

    @contextmanager
    def _step(self, step: str) -> Iterator[None]:
        with reporting_failed_attempts(self._signals, step):
            try:
                yield
            except (ApplicationError, CancelledError):
                raise
            except Exception as error:
                reason = self._registry.redact(f"{type(error).__name__}: {error}")
                raise ApplicationError(
                    f"catalog call failed, retrying: {reason}", type=ERROR_CATALOG_UNAVAILABLE
                ) from None


def admitted(admission: CatalogAdmission, name: str) -> str | None:
    """`unguarded` for an activity: an unknown catalog fails the purge, nothing retried."""
    try:
        return admission.unguarded(name)
    except CatalogNotAdmittedError as error:
        raise ApplicationError(str(error), type=ERROR_CATALOG_NOT_CONFIGURED, non_retryable=True) from None
