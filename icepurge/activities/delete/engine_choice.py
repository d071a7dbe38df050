"""Where engine `auto` switches to Spark: a number of planned content files per kind of store,
because where Spark pays off depends on the store (bench.compare_engines measures it; the
figures behind the defaults are in BENCHMARKS.md). None means `auto` stays local at every size."""

from __future__ import annotations

from dataclasses import dataclass, field

from icepurge.contract.schemes import StoreKind, store_kind

DEFAULT_AUTO_SPARK_MIN_FILES: dict[str, int | None] = {
    # On SeaweedFS the local engine was the faster at every size and shape measured (2 cores).
    StoreKind.S3: None,
    # Measured only on Azurite, an emulator whose single process sets the pace, and other stores
    # not at all: the threshold icepurge had before it measured per store.
    StoreKind.AZURE: 100_000,
    # The local engine's bulk unlinks reach plain Python's ceiling on a local disk.
    StoreKind.FILE: None,
    StoreKind.OTHER: 100_000,
}
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
        return DEFAULT_AUTO_SPARK_MIN_FILES[kind]

    def picks_spark(self, location: str, content_files: int) -> bool:
        threshold = self.minimum(location)
        return threshold is not None and content_files >= threshold
