"""AES-256-GCM payload codec: what reaches Temporal's history (inputs, results, queries, memo,
summaries, details) is ciphertext, so the FileIO credentials in a request stay secret there.

Keys are named; a payload records the key that sealed it, so keys can rotate: new payloads use
the current key, old ones open with any key still configured. A payload without the encrypted
encoding (e.g. a purge started by the `temporal` CLI without a codec endpoint) passes through."""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping, Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

from icepurge.connection.errors import CodecKeyError

ENCODING = b"binary/encrypted"
KEY_ID = "encryption-key-id"
_NONCE_BYTES = 12


def parse_key(key_id: str, encoded: str) -> bytes:
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise CodecKeyError(f"codec key {key_id!r} is not base64") from None
    if len(key) != 32:
        raise CodecKeyError(f"codec key {key_id!r} must be 32 bytes (AES-256), not {len(key)}")
    return key


def new_key() -> str:
    """A fresh key, base64, for ICEPURGE_CODEC_KEYS."""
    return base64.b64encode(AESGCM.generate_key(bit_length=256)).decode()


class AesGcmCodec(PayloadCodec):
    def __init__(self, keys: Mapping[str, bytes], current: str) -> None:
        if current not in keys:
            raise CodecKeyError(f"the current codec key {current!r} is not among the configured keys")
        self._ciphers = {key_id: AESGCM(key) for key_id, key in keys.items()}
        self._current = current

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self._seal(payload) for payload in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self._open(payload) for payload in payloads]

    def _seal(self, payload: Payload) -> Payload:
        nonce = os.urandom(_NONCE_BYTES)
        key_id = self._current.encode()
        sealed = self._ciphers[self._current].encrypt(nonce, payload.SerializeToString(), key_id)
        return Payload(metadata={"encoding": ENCODING, KEY_ID: key_id}, data=nonce + sealed)

    def _open(self, payload: Payload) -> Payload:
        if payload.metadata.get("encoding") != ENCODING:
            return payload
        key_id = payload.metadata.get(KEY_ID, b"").decode()
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise CodecKeyError(
                f"payload sealed with codec key {key_id!r}, which this process lacks; "
                "add it to ICEPURGE_CODEC_KEYS"
            )
        nonce, sealed = payload.data[:_NONCE_BYTES], payload.data[_NONCE_BYTES:]
        try:
            return Payload.FromString(cipher.decrypt(nonce, sealed, key_id.encode()))
        except InvalidTag:
            raise CodecKeyError(f"payload sealed with codec key {key_id!r} fails authentication") from None
