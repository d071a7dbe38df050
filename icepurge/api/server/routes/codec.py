"""A remote codec server (Temporal's protocol) so the Web UI and the `temporal` CLI can show
what the payload codec seals: `--ui-codec-endpoint` / `--codec-endpoint http://api/codec`.

Decoding reveals requests, FileIO credentials included: it needs the `decode` role on every
catalog. Encoding (for starts from the CLI) needs `start` on every catalog."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from fastapi import APIRouter, Request, Response
from google.protobuf import json_format
from temporalio.api.common.v1 import Payload, Payloads

from icepurge.api.server.auth import Principal
from icepurge.api.server.dependencies import Caller, forbidden
from icepurge.connection.errors import CodecKeyError
from icepurge.connection.payload_codec import AesGcmCodec
from icepurge.contract.roles import Role
from icepurge.contract.validation import InvalidPurgeRequestError

router = APIRouter(prefix="/codec", tags=["codec"])


async def _payloads(request: Request) -> Payloads:
    try:
        return json_format.Parse(await request.body(), Payloads())
    except json_format.ParseError:
        raise InvalidPurgeRequestError(
            'body: expected {"payloads": [{"metadata": ..., "data": ...}]}'
        ) from None


def _answer(payloads: Payloads) -> Response:
    return Response(json_format.MessageToJson(payloads), media_type="application/json")


async def _apply(
    request: Request,
    caller: Principal,
    role: Role,
    convert: Callable[[AesGcmCodec, Sequence[Payload]], Awaitable[list[Payload]]],
) -> Response:
    if not caller.may(role, None):
        raise forbidden(caller, role, None)
    payloads = await _payloads(request)
    codec: AesGcmCodec | None = request.app.state.codec
    if codec is None:
        return _answer(payloads)
    try:
        return _answer(Payloads(payloads=await convert(codec, payloads.payloads)))
    except CodecKeyError as error:
        raise InvalidPurgeRequestError(str(error)) from None


@router.post("/encode")
async def encode(request: Request, caller: Caller) -> Response:
    return await _apply(request, caller, Role.START, AesGcmCodec.encode)


@router.post("/decode")
async def decode(request: Request, caller: Caller) -> Response:
    return await _apply(request, caller, Role.DECODE, AesGcmCodec.decode)
