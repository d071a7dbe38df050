"""Worker configuration from environment variables (ICEPURGE_*) or a .env file."""

from __future__ import annotations

from pydantic import Field, SecretStr, model_validator
from temporalio.worker import WorkerDeploymentConfig

from icepurge.activities.delete.engine_choice import STORE_KINDS, AutoSparkThresholds
from icepurge.activities.plan.planner import ChunkSizing
from icepurge.activities.settings import ActivitySettings
from icepurge.connection.settings import CatalogPolicySettings, TemporalSettings
from icepurge.contract.table_list import PAGE_ENTRIES
from icepurge.stores.outcomes import DeleteTuning
from icepurge.worker.versioning import WorkflowVersioning, deployment_config


class WorkerSettings(TemporalSettings, CatalogPolicySettings):
    state_location: str = Field(
        description="Where plans and reports are kept: s3://bucket/prefix or file:///dir."
    )
    state_io_properties: dict[str, str] = Field(
        default_factory=dict, repr=False, description="FileIO properties for the state location (JSON)."
    )
    chunk_target_files: int = Field(5_000, ge=1, description="Distinct content files a chunk deletes.")
    plan_memory_files: int = Field(
        500_000, ge=1_000, description="Distinct content files planning holds in memory before it spills."
    )
    overlap_min_seconds: float = Field(
        0.5,
        ge=0,
        description="Deletes start while planning only when planning projects at least this many "
        "seconds still to read (the entries left, at 30,000 a second); 0 = as soon as a first chunk "
        "is ready.",
    )
    plan_checkpoint_manifests: int = Field(
        16,
        ge=1,
        description="Planning checkpoints (saves what it holds as a pending part) after this many "
        "manifests, or 25,000 manifest entries: counted, not timed, so every attempt of a plan writes "
        "the same parts; every worker of a fleet needs the same value.",
    )
    worker_processes: int = Field(
        0,
        ge=0,
        le=256,
        description="Worker processes `icepurge worker` runs on the task queue, under one supervisor "
        "(one metrics endpoint); 0 = as many as the cores it may use (affinity, cgroup CPU quota).",
    )
    malloc_arenas: int = Field(
        2,
        ge=0,
        le=1024,
        description="glibc malloc arenas the worker's threads share: few keep its memory flat over a "
        "long purge (icepurge/worker/malloc_arenas.py); 0 = glibc's default, 8 a core.",
    )
    max_concurrent_activities: int = Field(
        8, ge=1, le=256, description="Activity slots for single-table purges (the task queue's own)."
    )
    bulk_max_concurrent_activities: int | None = Field(
        None,
        ge=1,
        le=256,
        description="Activity slots for namespace and catalog purges (their batches, table purges and "
        "steps run on the task queue + '-bulk'); unset: as many as max_concurrent_activities.",
    )
    delete_max_attempts: int = Field(
        8, ge=1, le=20, description="Attempts per delete request (5xx, SlowDown)."
    )
    delete_batch_files: int = Field(
        1_000, ge=1, le=1_000, description="Keys per bulk delete request (S3 DeleteObjects takes up to 1000)."
    )
    spark_master: str | None = Field(
        None, description="local[N,F], spark://host:port or k8s://...; unset = no Spark engine."
    )
    spark_conf: dict[str, str] = Field(
        default_factory=dict, description="Extra Spark conf (JSON); no secrets."
    )
    auto_spark_min_files: int | None = Field(
        None,
        ge=0,
        description="Engine 'auto' uses Spark from this many content files, on every store; unset = "
        "each store's default, measured (see ICEPURGE_AUTO_SPARK_MIN_FILES_BY_STORE).",
    )
    auto_spark_min_files_by_store: dict[str, int | None] = Field(
        default_factory=dict,
        description="Per kind of store (s3, azure, file, other), JSON: the content files from which "
        "'auto' uses Spark; null = never. Wins over ICEPURGE_AUTO_SPARK_MIN_FILES.",
    )
    progress_signal_seconds: float = Field(
        2.0, gt=0, description="Least time between a running chunk's progress signals to its workflow."
    )
    event_sinks: list[str] = Field(
        default_factory=lambda: ["log"],
        description="Where purge events go: 'log', 'webhook', or 'package.module:Name' (JSON list).",
    )
    webhook_url: str | None = Field(None, description="The 'webhook' sink's receiver (http or https).")
    webhook_secret: SecretStr | None = Field(
        None, description="Shared secret the webhook bodies are signed with."
    )
    webhook_max_attempts: int = Field(
        4, ge=1, le=10, description="Attempts to deliver an event to the webhook receiver."
    )
    webhook_timeout_seconds: float = Field(
        5.0, gt=0, le=60, description="How long one delivery to the webhook receiver may take."
    )
    webhook_cooldown_seconds: float = Field(
        30.0, ge=0, description="After an event used every attempt, later ones skip the receiver this long."
    )
    config_fault_seconds: float = Field(
        300.0,
        gt=0,
        description="How long a step retries an object store it can't reach (unknown host, refused "
        "connection, missing credentials, wrong region) before the purge fails naming the error.",
    )
    shutdown_grace_seconds: float = Field(
        10.0,
        ge=0,
        le=600,
        description="On SIGTERM, how long running activities may go on before they are handed back "
        "(cancelled at their checkpoints, retried at once by another worker).",
    )
    guard_cache_seconds: float = Field(
        10.0,
        ge=0,
        le=3_600,
        description="How long the live-table guard reuses the other tables' locations it loaded "
        "(the purged identifier's own table is always loaded afresh).",
    )
    guard_concurrency: int = Field(8, ge=1, le=64, description="Table loads in flight per guard check.")
    table_list_page_entries: int = Field(
        PAGE_ENTRIES,
        ge=1,
        le=100_000,
        description="Names in each page object of a namespace purge's table list (and skipped "
        "entries in each of its skipped pages): the most of a list any reader holds per page.",
    )
    metrics_address: str | None = Field(
        None, description="host:port for the Prometheus /metrics endpoint; unset = no endpoint."
    )
    deployment_name: str | None = Field(
        None,
        min_length=1,
        max_length=255,
        pattern=r"^[^.]+$",
        description="Worker Versioning: the Worker Deployment this worker polls for, with "
        "ICEPURGE_BUILD_ID; unset = an unversioned worker.",
    )
    build_id: str | None = Field(
        None,
        min_length=1,
        max_length=255,
        description="Worker Versioning: this release's build id in ICEPURGE_DEPLOYMENT_NAME.",
    )
    versioning_behavior: WorkflowVersioning = Field(
        WorkflowVersioning.AUTO_UPGRADE,
        description="Worker Versioning: auto_upgrade (a running purge moves to the current version at "
        "its next workflow task) or pinned (it stays on the version it began on).",
    )

    @property
    def bulk_slots(self) -> int:
        return self.bulk_max_concurrent_activities or self.max_concurrent_activities

    @model_validator(mode="after")
    def _webhook_complete(self) -> WorkerSettings:
        if "webhook" in self.event_sinks and not (self.webhook_url and self.webhook_secret):
            raise ValueError(
                "the 'webhook' event sink needs ICEPURGE_WEBHOOK_URL and ICEPURGE_WEBHOOK_SECRET"
            )
        if self.webhook_url and not self.webhook_url.startswith(("http://", "https://")):
            raise ValueError("ICEPURGE_WEBHOOK_URL must be an http:// or https:// URL")
        return self

    @model_validator(mode="after")
    def _known_store_kinds(self) -> WorkerSettings:
        unknown = sorted(set(self.auto_spark_min_files_by_store) - set(STORE_KINDS))
        if unknown:
            raise ValueError(
                f"ICEPURGE_AUTO_SPARK_MIN_FILES_BY_STORE names unknown stores {unknown}; "
                f"use {', '.join(STORE_KINDS)}"
            )
        return self

    @model_validator(mode="after")
    def _versioned_completely(self) -> WorkerSettings:
        if (self.deployment_name is None) != (self.build_id is None):
            raise ValueError(
                "Worker Versioning needs both ICEPURGE_DEPLOYMENT_NAME and ICEPURGE_BUILD_ID (or neither, "
                "for an unversioned worker)"
            )
        return self

    def deployment_config(self) -> WorkerDeploymentConfig | None:
        return deployment_config(self.deployment_name, self.build_id, self.versioning_behavior)

    def delete_tuning(self) -> DeleteTuning:
        return DeleteTuning(max_attempts=self.delete_max_attempts, batch_files=self.delete_batch_files)

    def activity_settings(self) -> ActivitySettings:
        return ActivitySettings(
            state_location=self.state_location,
            state_properties=self.state_io_properties,
            sizing=ChunkSizing(
                target_files=self.chunk_target_files,
                memory_files=self.plan_memory_files,
                overlap_min_seconds=self.overlap_min_seconds,
                checkpoint_manifests=self.plan_checkpoint_manifests,
            ),
            tuning=self.delete_tuning(),
            auto_spark=AutoSparkThresholds(self.auto_spark_min_files, self.auto_spark_min_files_by_store),
            config_fault_seconds=self.config_fault_seconds,
        )
