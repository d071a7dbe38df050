"""The one place a URI's store is opened: its kind's entry in the store registry
(icepurge.contract.schemes) names the implementation and the extra it needs."""

from __future__ import annotations

import importlib

from icepurge.contract.schemes import STORE_REGISTRY, store_kind
from icepurge.extras import require_extra
from icepurge.stores.store import Store, StoreContext


def open_store(uri: str, context: StoreContext) -> Store:
    """The store `uri` is on; `uri` also tells a FileIO store which FileIO to load."""
    entry = STORE_REGISTRY[store_kind(uri)]
    if entry.extra is not None:
        require_extra(entry.extra.feature, entry.extra.module, entry.extra.name)
    # Imported when first asked for: a worker that never meets a kind never imports its client.
    module, _, name = entry.implementation.partition(":")
    implementation = getattr(importlib.import_module(module), name)
    store: Store = implementation(context, uri) if entry.opened_with_uri else implementation(context)
    return store
