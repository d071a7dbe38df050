"""Copies of one real table, registered in the catalog: a namespace of 10,000 small tables
seeded in minutes. Writing each through PyIceberg cost ~220 ms of CPU a table here (its writes
and SeaweedFS's), ~18 min for 10,000 tables on 2 cores, for each contender of a run.

A copy holds the template's objects under its own location: the Parquet files as they are, the
manifests and manifest lists re-encoded with its own paths (same codec, schema and header), the
metadata files with its own paths and a table UUID of its own. Its name has the template's
length, so every path keeps its length too.
"""

from __future__ import annotations

import io
import json
import sys
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import fastavro
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import TableAlreadyExistsError
from pyiceberg.table import Table
from sqlalchemy.exc import OperationalError

from icepurge.stores.registry import open_store
from icepurge.stores.store import Store, StoreContext

AVRO_HEADER_KEYS = ("avro.schema", "avro.codec")
WRITE_CONNECTIONS = 32
# SQLite lets one writer in at a time. Threads registering at once, on cores a test run also
# wanted, waited past its 5 s busy timeout once, and a 10^5-table seeding died at 70,283.
REGISTER_TRIES = 5


@dataclass(frozen=True)
class TemplateObject:
    """One object of the template, its path relative to the table's location."""

    relative: str
    body: bytes

    def copied(self, old: str, new: str, table_uuid: tuple[str, str]) -> bytes:
        if self.relative.endswith(".avro"):
            return _avro_with(self.body, lambda text: text.replace(old, new))
        if self.relative.endswith(".metadata.json"):
            return self.body.decode().replace(old, new).replace(*table_uuid).encode()
        return self.body


def _avro_with(body: bytes, rewrite: Callable[[str], str]) -> bytes:
    reader = fastavro.reader(io.BytesIO(body))
    schema = json.loads(reader.metadata["avro.schema"])
    header = {key: value for key, value in reader.metadata.items() if key not in AVRO_HEADER_KEYS}
    records = [_rewritten(record, rewrite) for record in reader]
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, codec=reader.codec, metadata=header)
    return out.getvalue()


def _rewritten(value: Any, rewrite: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return rewrite(value)
    if isinstance(value, dict):
        return {key: _rewritten(item, rewrite) for key, item in value.items()}
    if isinstance(value, list):
        return [_rewritten(item, rewrite) for item in value]
    return value


def _registered(catalog: Catalog, identifier: tuple[str, ...], metadata_location: str) -> None:
    """register_table, tried again (and said on stderr) while SQLite finds its database locked; a
    try whose commit landed before its error counts as done."""
    for attempt in range(1, REGISTER_TRIES + 1):
        try:
            catalog.register_table(identifier, metadata_location)
            return
        except TableAlreadyExistsError:
            if attempt == 1:
                raise
            return
        except OperationalError as error:
            if "database is locked" not in str(error) or attempt == REGISTER_TRIES:
                raise
            print(
                f"registering {'.'.join(identifier)}: the catalog's database is locked "
                f"(try {attempt} of {REGISTER_TRIES}); trying again",
                file=sys.stderr,
                flush=True,
            )


def seeding_order(namespaces: Iterable[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The order to seed namespaces in: the last name first. PyIceberg's SqlCatalog checks, before
    each register_table, that the namespace exists, with a read of the tables in key order that
    stops at the first row of that namespace, past every row of the namespaces that sort before
    it; in ascending order that read passed every table seeded so far, and a seeding of 10^5
    tables slowed from ~2,250 a minute over its first 10,000 to ~1,150 over its last. In this
    order no seeded row sorts before."""
    return sorted(namespaces, key=".".join, reverse=True)


def copy_table(
    catalog: Catalog, template: Table, names: list[str], properties: dict[str, str], threads: int
) -> list[str]:
    """Registers a copy of `template` under each name, in the template's namespace; returns their
    locations. Every name has the template's name's length."""
    namespace, template_name = template.name()[:-1], template.name()[-1]
    old_location = template.location()
    if any(len(name) != len(template_name) for name in names):
        raise ValueError(f"every copy's name must have {len(template_name)} characters, as {template_name!r}")
    store = open_store(old_location, StoreContext(properties, connections=WRITE_CONNECTIONS))
    objects = _template_objects(store, old_location)
    metadata_relative = template.metadata_location.removeprefix(old_location)
    old_uuid = str(template.metadata.table_uuid)

    def copy(name: str) -> str:
        new_location = old_location.removesuffix(template_name) + name
        for template_object in objects:
            body = template_object.copied(old_location, new_location, (old_uuid, str(uuid.uuid4())))
            store.write(new_location + template_object.relative, body)
        _registered(catalog, (*namespace, name), new_location + metadata_relative)
        return new_location

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(copy, names))


def _template_objects(store: Store, location: str) -> list[TemplateObject]:
    objects: list[TemplateObject] = []
    token: str | None = None
    while True:
        page = store.list_page(location, token, 1000, flat=False)
        objects += [
            TemplateObject(listed.uri.removeprefix(location), store.read(listed.uri))
            for listed in page.objects
            if not listed.uri.endswith("/")
        ]
        token = page.next_token
        if token is None:
            return objects
