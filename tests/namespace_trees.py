"""Namespace trees for the namespace-purge tests, and the outcome they must reach, computed from
the catalog and the store, independently of the code under test."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyiceberg.catalog.sql import SqlCatalog

from icepurge.contract.names import PROTECTED_PROPERTY
from tests.store import S3Store
from tests.tables import simple_table


@dataclass
class Tree:
    root: tuple[str, ...]
    # Table identifier -> the files under its location before the purge.
    purged: dict[tuple[str, ...], set[str]] = field(default_factory=dict)
    kept: dict[tuple[str, ...], set[str]] = field(default_factory=dict)
    # Namespaces that must be gone afterwards, and those that must stay.
    emptied: list[tuple[str, ...]] = field(default_factory=list)
    staying: list[tuple[str, ...]] = field(default_factory=list)

    @property
    def files(self) -> int:
        return sum(len(files) for files in self.purged.values())


def nested_tree(lake: SqlCatalog, s3: S3Store, root: str) -> Tree:
    """root/{t0, a/{t1, locked (protected), deep/t3}, v1.2/t4, 日本/t5, keep (protected)/k1}."""
    tree = Tree(root=(root,))
    a, deep, dotted, unicode, keep = (
        (root, "a"),
        (root, "a", "deep"),
        (root, "v1.2"),
        (root, "日本"),
        (root, "keep"),
    )
    for namespace, name in [((root,), "t0"), (a, "t1"), (deep, "t3"), (dotted, "t4"), (unicode, "t5")]:
        table = simple_table(lake, namespace, name, appends=1)
        tree.purged[(*namespace, name)] = s3.list(table.location())
    locked = simple_table(lake, a, "locked", appends=1, properties={PROTECTED_PROPERTY: "true"})
    tree.kept[(*a, "locked")] = s3.list(locked.location())
    lake.create_namespace(keep, {PROTECTED_PROPERTY: "true"})
    guarded = simple_table(lake, keep, "k1", appends=1)
    tree.kept[(*keep, "k1")] = s3.list(guarded.location())
    tree.emptied = [deep, dotted, unicode]
    tree.staying = [(root,), a, keep]
    return tree


def flat_namespace(
    lake: SqlCatalog, s3: S3Store, namespace: tuple[str, ...], tables: int, appends: int = 1
) -> Tree:
    tree = Tree(root=namespace, emptied=[namespace])
    for index in range(tables):
        table = simple_table(lake, namespace, f"t{index:03d}", appends=appends)
        tree.purged[(*namespace, f"t{index:03d}")] = s3.list(table.location())
    return tree
