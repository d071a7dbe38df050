"""How every icepurge process reaches Temporal (address, namespace, task queue, payload codec)
and what the API and the workers must agree on; from ICEPURGE_* variables or a .env file."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from icepurge.connection.errors import CodecKeyError
from icepurge.connection.payload_codec import AesGcmCodec, parse_key
from icepurge.contract.names import TASK_QUEUE


class TemporalSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ICEPURGE_", env_file=".env", extra="ignore")

    temporal_address: str = Field(
        "127.0.0.1:7233",
        description="Temporal frontend host:port. Where unset, Temporal's own configuration decides "
        "(TEMPORAL_ADDRESS, TEMPORAL_PROFILE; icepurge/connection/temporal_target.py), else this.",
    )
    temporal_namespace: str = Field(
        "default", description="Where unset, TEMPORAL_NAMESPACE (or its profile) decides, else this."
    )
    task_queue: str = Field(
        TASK_QUEUE,
        description="The task queue single-table purges run on; namespace and catalog purges run on "
        "it + '-bulk'.",
    )
    codec_keys: dict[str, SecretStr] = Field(
        default_factory=dict,
        repr=False,
        description="Payload encryption keys as JSON {key id: base64 of 32 bytes}; none = plaintext.",
    )
    codec_key_id: str | None = Field(
        None, description="The key that seals new payloads; may be left out when there is one key."
    )

    def payload_codec(self) -> AesGcmCodec | None:
        if not self.codec_keys:
            return None
        keys = {key_id: parse_key(key_id, key.get_secret_value()) for key_id, key in self.codec_keys.items()}
        current = self.codec_key_id
        if current is None:
            if len(keys) > 1:
                raise CodecKeyError("several codec keys: name the one that seals in ICEPURGE_CODEC_KEY_ID")
            current = next(iter(keys))
        return AesGcmCodec(keys, current)


class CatalogPolicySettings(BaseSettings):
    """What the API and the workers must agree on about catalogs they can't reach."""

    model_config = SettingsConfigDict(env_prefix="ICEPURGE_", env_file=".env", extra="ignore")

    snapshot_only_catalogs: list[str] = Field(
        default_factory=list,
        description="Catalogs not configured here whose purges by snapshot are taken anyway, "
        'without a live-table guard (JSON list; ["*"] = any name). A purge naming any other '
        "catalog that is not configured is refused.",
    )
