"""Where engine `auto` switches to Spark: a number of planned content files per kind of store,
because where Spark pays off depends on the store. The defaults are each kind's entry in the store
registry (icepurge.contract.schemes); None means `auto` stays local at every size."""

from __future__ import annotations

from dataclasses import dataclass, field

from icepurge.contract.schemes import STORE_REGISTRY, StoreKind, store_kind

STORE_KINDS = tuple(kind.value for kind in StoreKind)


@dataclass(frozen=True)
class AutoSparkThresholds:
    """`everywhere` (the operator's one number) replaces the defaults; `by_store` wins over both."""

    everywhere: int | None = None
    by_store: dict[str, int | None] = field(default_factory=dict)

    def minimum(self, location: str) -> int | None:
        kind = store_kind(location)
        if kind in self.by_store:
            return self.by_store[kind]
        if self.everywhere is not None:
            return self.everywhere
        return STORE_REGISTRY[kind].auto_spark_min_files

    def picks_spark(self, location: str, content_files: int) -> bool:
        threshold = self.minimum(location)
        return threshold is not None and content_files >= threshold
