"""The payload codec: requests (FileIO credentials included) are sealed in Temporal's history,
keys rotate, tampering is caught, and the API's codec server opens payloads only for operators."""

from __future__ import annotations

import base64
import json

import httpx
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from temporalio.api.common.v1 import Payload

from icepurge.api.clients.temporal_client import PurgeClient
from icepurge.connection.errors import CodecKeyError
from icepurge.connection.payload_codec import ENCODING, AesGcmCodec, new_key, parse_key
from icepurge.connection.settings import TemporalSettings
from icepurge.contract.states import PurgeState
from icepurge.devstack.stack import EmbeddedStack
from tests.api_server import bearer
from tests.cli_runner import icepurge
from tests.purge_helpers import purge, request_for, sealed_history
from tests.store import S3Store
from tests.tables import simple_table

PLAIN = Payload(metadata={"encoding": b"json/plain"}, data=b'{"s3.secret-access-key": "hush"}')


def _codec(current: str, *key_ids: str, keys: dict[str, str]) -> AesGcmCodec:
    return AesGcmCodec({key_id: parse_key(key_id, keys[key_id]) for key_id in key_ids}, current)


async def test_payloads_are_sealed_and_open_after_a_key_rotation() -> None:
    keys = {"old": new_key(), "new": new_key()}
    (sealed,) = await _codec("old", "old", keys=keys).encode([PLAIN])
    assert sealed.metadata["encoding"] == ENCODING
    assert b"hush" not in sealed.SerializeToString()
    rotated = _codec("new", "old", "new", keys=keys)
    assert await rotated.decode([sealed]) == [PLAIN]
    (resealed,) = await rotated.encode([PLAIN])
    assert resealed.metadata["encryption-key-id"] == b"new"
    with pytest.raises(CodecKeyError, match="'old', which this process lacks"):
        await _codec("new", "new", keys=keys).decode([sealed])


async def test_a_tampered_payload_is_refused_and_a_plain_one_passes() -> None:
    keys = {"k": new_key()}
    codec = _codec("k", "k", keys=keys)
    (sealed,) = await codec.encode([PLAIN])
    tampered = Payload(metadata=sealed.metadata, data=sealed.data[:-1] + bytes([sealed.data[-1] ^ 1]))
    with pytest.raises(CodecKeyError, match="fails authentication"):
        await codec.decode([tampered])
    assert await codec.decode([PLAIN]) == [PLAIN]


@pytest.mark.parametrize(
    ("key", "message"), [("not base64!", "not base64"), (base64.b64encode(b"short").decode(), "32 bytes")]
)
def test_a_malformed_key_is_named(key: str, message: str) -> None:
    with pytest.raises(CodecKeyError, match=f"'mine'.*{message}|{message}"):
        parse_key("mine", key)


async def test_a_purge_leaves_no_secret_in_history(
    catalog: SqlCatalog, purges: PurgeClient, s3: S3Store, stack: EmbeddedStack
) -> None:
    table = simple_table(catalog, ("codec",), "sealed")
    report = await purge(purges, request_for(table, s3.properties))
    assert report.status.state is PurgeState.SUCCEEDED
    history = await sealed_history(stack, report.status.purge_id)
    assert s3.properties["s3.secret-access-key"].encode() not in history
    assert s3.properties["s3.access-key-id"].encode() not in history
    assert table.metadata_location.encode() not in history, "inputs and results are sealed"
    assert ENCODING in history


async def test_the_codec_server_opens_payloads_for_operators_only(api_url: str, stack: EmbeddedStack) -> None:
    codec = stack.temporal_settings().payload_codec()
    assert codec is not None
    (sealed,) = await codec.encode([PLAIN])
    body = {
        "payloads": [
            {
                "metadata": {key: base64.b64encode(value).decode() for key, value in sealed.metadata.items()},
                "data": base64.b64encode(sealed.data).decode(),
            }
        ]
    }
    async with httpx.AsyncClient(base_url=api_url) as http:
        opened = await http.post("/codec/decode", json=body, headers=bearer("admin"))
        assert opened.status_code == 200
        (payload,) = opened.json()["payloads"]
        assert base64.b64decode(payload["data"]) == PLAIN.data
        assert (await http.post("/codec/decode", json=body)).status_code == 401
        # A token scoped to one catalog could read other catalogs' credentials: refused.
        assert (await http.post("/codec/decode", json=body, headers=bearer("a-full"))).status_code == 403
        assert (await http.post("/codec/decode", json=body, headers=bearer("a-reader"))).status_code == 403
        malformed = await http.post("/codec/decode", content=b"[1]", headers=bearer("admin"))
        assert malformed.status_code == 422


async def test_the_cli_mints_a_key_the_settings_accept(stack: EmbeddedStack) -> None:
    code, out, err = await icepurge(stack, "admin", "codec-key", "2026-11")
    assert code == 0, err
    name, _, value = out.strip().partition("=")
    assert name == "ICEPURGE_CODEC_KEYS"
    codec = TemporalSettings(codec_keys=json.loads(value)).payload_codec()
    assert codec is not None
    (sealed,) = await codec.encode([PLAIN])
    assert sealed.metadata["encryption-key-id"] == b"2026-11"
    assert await codec.decode([sealed]) == [PLAIN]
