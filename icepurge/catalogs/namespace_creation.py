"""A namespace made if it's missing, however many callers make it at once. PyIceberg's
`create_namespace_if_not_exists` catches only the catalog's own "already exists"; the SQL catalog
checks, then inserts, so the loser of a race meets the database's unique constraint instead."""

from __future__ import annotations

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError
from pyiceberg.typedef import Identifier


def ensure_namespace(catalog: Catalog, namespace: str | Identifier) -> None:
    try:
        catalog.create_namespace(namespace)
    except NamespaceAlreadyExistsError:
        return
    except Exception:
        if not catalog.namespace_exists(namespace):
            raise
