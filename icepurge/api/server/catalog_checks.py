"""Which catalogs a request may name: configured ones for purges by name, and for purges by
snapshot also those declared snapshot-only. A refusal names only the catalogs the token may use."""

from __future__ import annotations

from fastapi import Request

from icepurge.api.clients.errors import PurgeNotFoundError
from icepurge.api.server.auth import Principal
from icepurge.api.server.settings import ApiSettings
from icepurge.catalogs.admission import CatalogAdmission, CatalogNotAdmittedError, unknown_catalog
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.contract.roles import Role


def _registry(request: Request) -> CatalogRegistry:
    registry: CatalogRegistry = request.app.state.catalogs
    return registry


def usable_catalogs(request: Request, caller: Principal) -> list[str]:
    """The configured catalogs the token may use: the only ones a refusal may name to it."""
    return [name for name in _registry(request).names() if any(caller.may(role, name) for role in Role)]


def known_catalog(request: Request, caller: Principal, catalog: str) -> None:
    """Purges by name (a table, a namespace) need the catalog configured here."""
    if not _registry(request).knows(catalog):
        raise PurgeNotFoundError(unknown_catalog(catalog, usable_catalogs(request, caller), snapshot=False))


def admitted_catalog(request: Request, caller: Principal, catalog: str) -> None:
    """A purge by snapshot needs the catalog configured here, or declared snapshot-only."""
    settings: ApiSettings = request.app.state.settings
    try:
        CatalogAdmission(_registry(request), settings.snapshot_only_catalogs).unguarded(catalog)
    except CatalogNotAdmittedError:
        raise PurgeNotFoundError(unknown_catalog(catalog, usable_catalogs(request, caller))) from None
