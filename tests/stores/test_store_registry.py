"""Each kind of store's facts live in one registry entry (icepurge.contract.schemes): every
StoreKind has one, with every fact, its implementation a Store, and no scheme on two kinds. A new
kind without its entry fails here, not with a KeyError in a purge."""

from __future__ import annotations

import importlib
import inspect

import pytest

from icepurge.activities.delete.engine_choice import AutoSparkThresholds
from icepurge.contract.schemes import (
    LISTABLE_KINDS,
    STORE_REGISTRY,
    SUPPORTED_SCHEMES,
    StoreEntry,
    StoreKind,
    store_kind,
)
from icepurge.stores.store import Store


def test_every_kind_has_an_entry_with_every_fact() -> None:
    assert set(STORE_REGISTRY) == set(StoreKind)
    for entry in STORE_REGISTRY.values():
        assert isinstance(entry, StoreEntry) and entry.schemes


@pytest.mark.parametrize("kind", list(StoreKind))
def test_each_kinds_implementation_is_a_store(kind: StoreKind) -> None:
    module, _, name = STORE_REGISTRY[kind].implementation.partition(":")
    implementation = getattr(importlib.import_module(module), name)
    missing = [
        method
        for method in Store.__dict__
        if not method.startswith("_") and not hasattr(implementation, method)
    ]
    assert not missing, f"{implementation.__name__} lacks {missing}"
    parameters = list(inspect.signature(implementation).parameters)
    assert len(parameters) == (2 if STORE_REGISTRY[kind].opened_with_uri else 1), parameters


def test_a_scheme_is_on_one_kind_and_every_scheme_is_supported() -> None:
    seen: dict[str, StoreKind] = {}
    for kind, entry in STORE_REGISTRY.items():
        for scheme in entry.schemes:
            assert scheme not in seen, f"{scheme} is on {seen[scheme]} and {kind}"
            seen[scheme] = kind
            assert scheme in SUPPORTED_SCHEMES
            assert store_kind(f"{scheme}://bucket/table/metadata/v1.metadata.json") is kind


def test_the_tables_derived_from_the_registry() -> None:
    assert {StoreKind.S3, StoreKind.AZURE, StoreKind.GCS, StoreKind.FILE} == LISTABLE_KINDS
    thresholds = AutoSparkThresholds()
    for kind, entry in STORE_REGISTRY.items():
        sample = f"{min(entry.schemes)}://bucket/t/metadata/v1.metadata.json"
        assert thresholds.minimum(sample) == entry.auto_spark_min_files, kind
