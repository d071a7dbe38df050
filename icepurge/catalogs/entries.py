"""What a catalog holds in a namespace, as far as the catalog can tell: its Iceberg tables, and
every other entry (views, other engines' kinds) that a namespace purge leaves alone and that
keeps the namespace from being dropped. Each kind lists them its own way
(icepurge/catalogs/kind.py, sql.py): catalogs that can't tell keep their namespaces, and the
report says why."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyiceberg.typedef import Identifier

VIEW = "view"


@dataclass(frozen=True)
class Entry:
    """An entry that is not an Iceberg table: a view, or a kind some other engine wrote."""

    identifier: Identifier
    kind: str


@dataclass(frozen=True)
class NamespaceEntries:
    tables: list[Identifier] = field(default_factory=list)
    others: list[Entry] = field(default_factory=list)
    # Why the catalog can't tell what else it holds: its namespace is then kept.
    unknowable: str | None = None
    # False for a level that is only a prefix of deeper namespaces: a SQL catalog lists
    # `a.b` of a namespace ["a.b", "c"] as a level of its own, which has nothing to drop.
    own_entry: bool = True
