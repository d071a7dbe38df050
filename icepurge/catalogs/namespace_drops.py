"""Whether a namespace a namespace purge walked may go: only when the catalog holds nothing in it
that the purge did not purge (tables, views, other engines' entries, nested namespaces), and only
when the catalog can tell. A dry run asks the same question of the catalog as it is now, counting
the tables its previews would purge and the namespaces it would drop as gone."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NamespaceNotEmptyError, NoSuchNamespaceError
from pyiceberg.typedef import Identifier

from icepurge.catalogs.namespace_listing import children
from icepurge.catalogs.registry import kind_of

_SHOWN_NAMES = 3


@dataclass
class DropPreview:
    purged: frozenset[Identifier]
    dropped: set[Identifier] = field(default_factory=set)


def _shown(held: list[str]) -> str:
    more = len(held) - _SHOWN_NAMES
    return ", ".join(held[:_SHOWN_NAMES]) + (f" and {more} more" if more > 0 else "")


def drop_if_empty(
    catalog: Catalog, name: str, namespace: Identifier, preview: DropPreview | None = None
) -> str | None:
    """None when dropped (or, previewed, when it would be); why it stays otherwise ("" when it
    was no entry of its own)."""
    entries = kind_of(catalog).namespace_entries(namespace)
    if entries.unknowable:
        return f"kept: {entries.unknowable}"
    gone = preview.purged if preview else frozenset()
    held = [".".join(table) for table in entries.tables if table not in gone]
    held += [f"{entry.kind} {'.'.join(entry.identifier)}" for entry in entries.others]
    dropped = preview.dropped if preview else set()
    held += [f"namespace {'.'.join(child)}" for child in children(catalog, namespace) if child not in dropped]
    if held:
        return f"{'would still hold' if preview else 'still holds'} {_shown(held)}"
    if preview is not None:
        preview.dropped.add(namespace)
        return None if entries.own_entry else ""
    try:
        catalog.drop_namespace(namespace)
    except NoSuchNamespaceError:
        return ""
    except NamespaceNotEmptyError:
        return f"the catalog {name!r} says it is not empty"
    return None
