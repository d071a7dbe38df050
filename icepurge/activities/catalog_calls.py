"""What every catalog step shares: the catalog by name, protection, and errors that leave
redacted and without their cause chain (Temporal keeps failure messages in clear, and a catalog's
error may quote its URI or credentials)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchNamespaceError
from temporalio.exceptions import ApplicationError, CancelledError

from icepurge.activities.attempt_reports import reporting_failed_attempts
from icepurge.activities.catalogs import CatalogNotConfiguredError, CatalogRegistry
from icepurge.activities.progress_signals import ProgressSignals
from icepurge.contract.names import (
    ERROR_CATALOG_NOT_CONFIGURED,
    ERROR_CATALOG_UNAVAILABLE,
    PROTECTED_PROPERTY,
)


def protected(properties: dict[str, str]) -> bool:
    return properties.get(PROTECTED_PROPERTY, "").strip().lower() == "true"


def protected_ancestor(catalog: Catalog, levels: list[str]) -> tuple[str | None, int]:
    """The innermost namespace level that says it is protected, if any, and the catalog calls
    it took to find out."""
    for calls, depth in enumerate(range(len(levels), 0, -1), start=1):
        namespace = tuple(levels[:depth])
        try:
            properties = catalog.load_namespace_properties(namespace)
        except NoSuchNamespaceError:
            # Catalogs that hold nested namespaces flat have no entry for a parent level.
            continue
        if protected(properties):
            return f"namespace {'.'.join(namespace)}", calls
    return None, len(levels)


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
