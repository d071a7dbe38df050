"""HTTP API configuration from ICEPURGE_* environment variables."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from icepurge.api.server.front_door.policy import FrontDoorPolicy
from icepurge.connection.settings import CatalogPolicySettings, TemporalSettings
from icepurge.contract.namespace_request import MAX_WINDOW


class ApiSettings(TemporalSettings, CatalogPolicySettings):
    api_host: str = Field("127.0.0.1", description="The address the API listens on.")
    api_port: int = Field(8000, ge=1, le=65535, description="The port the API listens on.")
    api_auth_file: Path | None = Field(None, description="Token file (see icepurge/api/server/auth.py).")
    api_insecure_dev: bool = Field(
        False, description="Serve without authentication: every caller may do anything. Dev only."
    )
    api_keep_alive_seconds: int = Field(
        75,
        ge=1,
        description="How long an idle client connection is kept open. Longer than clients stay idle "
        "between calls (a REST client creating a table between two calls to the front door; a load "
        "balancer's 60 s): uvicorn's 5 s closed connections just as clients reused them, and a "
        "DELETE sent on one failed before it reached the API.",
    )
    api_max_body_bytes: int = Field(1_048_576, ge=1024, description="Larger request bodies get 413.")
    api_public_url: str | None = Field(
        None, description="Base of the status URLs returned; default: the request's."
    )
    api_cors_origins: list[str] = Field(
        default_factory=list, description="Browser origins allowed to call (the Web UI, for /codec)."
    )
    state_location: str | None = Field(
        None, description="The workers' state location, where `GET /v1/purges/{id}/report` reads reports."
    )
    state_io_properties: dict[str, str] = Field(
        default_factory=dict, repr=False, description="FileIO properties for the state location (JSON)."
    )
    front_door: dict[str, FrontDoorPolicy] = Field(
        default_factory=dict,
        description="The Iceberg REST front door: the REST catalogs (PyIceberg config) it serves, by "
        "name, each with its policy (JSON); clients use http://<api>/iceberg/<catalog> as their uri.",
    )
    max_concurrent_units: int = Field(
        MAX_WINDOW,
        ge=1,
        le=MAX_WINDOW,
        description="The most work units (a batch of small tables, or one table purge) a namespace "
        "purge started here may run at once: a request asking for more is refused (422). Lower it to "
        "keep one purge from taking a shared fleet's every slot.",
    )
    spark_master: str | None = Field(
        None, description="The workers' Spark master, for `icepurge doctor` to check it is reachable."
    )
