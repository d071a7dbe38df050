"""Every port the embedded stack binds, so a `make run` stack and a test stack never collide."""

from __future__ import annotations

from dataclasses import dataclass

from icepurge.devstack.free_ports import free_ports


@dataclass(frozen=True)
class StackPorts:
    temporal: int
    temporal_ui: int
    temporal_http: int
    temporal_metrics: int
    s3: int
    weed_master: int
    weed_volume: int
    weed_filer: int
    s3_grpc: int
    weed_master_grpc: int
    weed_volume_grpc: int
    weed_filer_grpc: int
    api: int
    worker_metrics: int
    iceberg_rest: int

    @classmethod
    def defaults(cls) -> StackPorts:
        """The well-known ports of `make run`: the temporal CLI and Web UI work without flags."""
        return cls.from_pairs(temporal=7233, temporal_ui=8233, s3=8333, api=8000, base=17300)

    @classmethod
    def from_pairs(cls, temporal: int, temporal_ui: int, s3: int, api: int, base: int) -> StackPorts:
        return cls(
            temporal=temporal,
            temporal_ui=temporal_ui,
            temporal_http=base,
            temporal_metrics=base + 1,
            s3=s3,
            weed_master=base + 2,
            weed_volume=base + 3,
            weed_filer=base + 4,
            s3_grpc=base + 5,
            weed_master_grpc=base + 6,
            weed_volume_grpc=base + 7,
            weed_filer_grpc=base + 8,
            api=api,
            worker_metrics=base + 9,
            iceberg_rest=base + 10,
        )

    @classmethod
    def free(cls) -> StackPorts:
        """Ports the OS reports free now, for a test stack beside a running one."""
        return cls(*free_ports(15))
