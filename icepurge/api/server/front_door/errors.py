"""Errors in the Iceberg REST spec's error model: {"error": {"message", "type", "code"}}."""

from __future__ import annotations

from fastapi.responses import JSONResponse


def iceberg_error(
    code: int, error_type: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": error_type, "code": code}}, status_code=code, headers=headers
    )
