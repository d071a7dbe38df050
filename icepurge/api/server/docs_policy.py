"""/docs and /redoc load nothing from outside the API: their assets are the installed package's
(fastapi-offline), and a Content-Security-Policy stops what their scripts would still fetch
(ReDoc's footer logo, Swagger UI's validator badge) — ReDoc drops an image that fails to load."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

DOC_PAGES = frozenset({"/docs", "/redoc", "/docs/oauth2-redirect"})
# The pages' own inline start-up scripts and styles; their workers start from blob: URLs.
SAME_ORIGIN_ONLY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:"
)
# Swagger UI asks validator.swagger.io for a badge unless told not to.
SWAGGER_UI_PARAMETERS = {"validatorUrl": None}


async def same_origin_docs(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    response = await call_next(request)
    if request.url.path in DOC_PAGES:
        response.headers["Content-Security-Policy"] = SAME_ORIGIN_ONLY
    return response
