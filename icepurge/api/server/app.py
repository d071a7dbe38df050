"""The HTTP API application: routes, auth and error mapping (never a stack trace)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel
from temporalio.service import RPCError

from icepurge.api.clients.errors import (
    PurgeControlRejectedError,
    PurgeNotFoundError,
    PurgeReportUnavailableError,
    PurgeServiceUnavailableError,
)
from icepurge.api.server.auth import IgnoredTokenNotice, TokenVerifier
from icepurge.api.server.body_limit import BodyLimit
from icepurge.api.server.docs_policy import SWAGGER_UI_PARAMETERS, same_origin_docs
from icepurge.api.server.front_door.routes import router as front_door_router
from icepurge.api.server.report_pages import ReportReader
from icepurge.api.server.routes import catalogs, codec, controls, doctor, namespace_purges, purges, reports
from icepurge.api.server.settings import ApiSettings
from icepurge.api.server.temporal_connection import TemporalConnection
from icepurge.catalogs.configured import CatalogRegistry
from icepurge.connection.errors import CodecKeyError, undecodable
from icepurge.connection.tracing import tracing_interceptors
from icepurge.contract.validation import InvalidPurgeRequestError

log = logging.getLogger(__name__)


class Problem(BaseModel):
    detail: str


def _problem(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


async def _unavailable(_: Request, error: Exception) -> JSONResponse:
    retry = getattr(error, "retry_after", 5.0)
    return _problem(503, str(error), {"Retry-After": str(int(retry))})


async def _not_found(_: Request, error: Exception) -> JSONResponse:
    return _problem(404, str(error))


async def _rejected(_: Request, error: Exception) -> JSONResponse:
    return _problem(409, str(error))


async def _invalid(_: Request, error: Exception) -> JSONResponse:
    return _problem(422, str(error))


async def _invalid_input(request: Request, error: Exception) -> JSONResponse:
    """FastAPI's default answer echoes the input, which may hold FileIO credentials: not here."""
    issues = error.errors() if isinstance(error, RequestValidationError) else []
    detail = [
        {"loc": issue["loc"], "msg": _input_message(request, issue), "type": issue["type"]}
        for issue in issues
    ]
    return JSONResponse({"detail": detail}, status_code=422)


def _input_message(request: Request, issue: Any) -> str:
    """Without a JSON Content-Type the body arrives as text, and pydantic's message about it
    ("Input should be a valid dictionary...") says nothing of the header that is missing."""
    json_body = "json" in request.headers.get("content-type", "")
    if tuple(issue["loc"]) == ("body",) and not json_body:
        return "the body must be a JSON object, sent with the header Content-Type: application/json"
    return str(issue["msg"])


async def _temporal_error(_: Request, error: Exception) -> JSONResponse:
    status = error.status.name if isinstance(error, RPCError) else type(error).__name__
    log.warning("Temporal answered %s", status)
    return _problem(502, f"Temporal answered {status}")


async def _undecodable(request: Request, error: Exception) -> JSONResponse:
    """A sealed payload this process can't open: a configuration error, named as one."""
    if isinstance(error, CodecKeyError) or undecodable(error):
        log.warning("a payload could not be decoded: %s", error)
        return _problem(
            500,
            f"the API can't open the purge's payloads ({str(error).strip(chr(39))}): set "
            "ICEPURGE_CODEC_KEYS on the API as on the workers",
        )
    return await _unexpected(request, error)


async def _unexpected(_: Request, error: Exception) -> JSONResponse:
    log.exception("unexpected error")
    return _problem(500, f"internal error ({type(error).__name__}); see the API's log")


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    await app.state.front_door_client.aclose()


def create_app(settings: ApiSettings) -> FastAPI:
    # Swagger UI and ReDoc from the installed package's assets, not a CDN: /docs works offline.
    app = FastAPIOffline(
        title="icepurge",
        version="1",
        description="Durable purges of dropped Iceberg tables. Bearer tokens: see docs/clients.md.",
        responses={code: {"model": Problem} for code in (401, 403, 404, 413, 503)},
        lifespan=_lifespan,
        swagger_ui_parameters=SWAGGER_UI_PARAMETERS,
    )
    app.middleware("http")(same_origin_docs)
    app.state.settings = settings
    app.state.verifier = TokenVerifier.from_file(settings.api_auth_file) if settings.api_auth_file else None
    app.state.ignored_token_notice = IgnoredTokenNotice()
    app.state.temporal = TemporalConnection(settings)
    app.state.codec = settings.payload_codec()
    app.state.catalogs = CatalogRegistry.from_pyiceberg_config()
    app.state.reports = ReportReader(settings.state_location, settings.state_io_properties)
    # One connection pool to the upstream catalogs, for every front-door call.
    app.state.front_door_client = httpx.AsyncClient(timeout=httpx.Timeout(60.0, connect=5.0))
    app.add_middleware(BodyLimit, max_bytes=settings.api_max_body_bytes)
    if settings.api_cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.api_cors_origins,
            allow_credentials=True,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "X-Namespace"],
        )
    app.add_exception_handler(PurgeServiceUnavailableError, _unavailable)
    app.add_exception_handler(PurgeNotFoundError, _not_found)
    app.add_exception_handler(PurgeReportUnavailableError, _not_found)
    app.add_exception_handler(PurgeControlRejectedError, _rejected)
    app.add_exception_handler(InvalidPurgeRequestError, _invalid)
    app.add_exception_handler(RequestValidationError, _invalid_input)
    app.add_exception_handler(RPCError, _temporal_error)
    app.add_exception_handler(KeyError, _undecodable)
    app.add_exception_handler(CodecKeyError, _undecodable)
    app.add_exception_handler(Exception, _unexpected)
    for routes in (purges, catalogs, namespace_purges, controls, reports, doctor, codec):
        app.include_router(routes.router)
    app.include_router(front_door_router)
    if tracing_interceptors():
        # Only once tracing is set up: the instrumentation's import alone costs every API start.
        from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

        FastAPIInstrumentor.instrument_app(app)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", responses={503: {"model": Problem}})
    async def readyz() -> JSONResponse:
        why = await app.state.temporal.unready()
        if why is None:
            return JSONResponse({"status": "ready"})
        return _problem(503, why, {"Retry-After": "5"})

    return app
