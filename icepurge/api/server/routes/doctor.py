"""What `icepurge doctor` asks the API: who the token is, and the checks run with the API's own
settings (which are the workers' settings where the API runs next to them)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from icepurge.api.server.dependencies import Caller, forbidden
from icepurge.api.server.doctor_checks import server_checks
from icepurge.contract.doctor import DoctorReport, TokenInfo
from icepurge.contract.roles import Role

router = APIRouter(prefix="/v1", tags=["doctor"])


@router.get("/token", response_model=TokenInfo)
async def token_info(caller: Caller) -> TokenInfo:
    """The calling token's name, roles and catalogs (never the token)."""
    return TokenInfo(name=caller.name, roles=sorted(caller.roles), catalogs=sorted(caller.catalogs))


@router.get("/doctor", response_model=DoctorReport)
async def doctor(caller: Caller, request: Request) -> DoctorReport:
    """Temporal and its search attributes, the workers and their codec, the state location, each
    catalog, Spark: each check's outcome and, when it fails, how to fix it (role read)."""
    if Role.READ not in caller.roles:
        raise forbidden(caller, Role.READ, None)
    return DoctorReport(checks=await server_checks(request.app.state.settings, request.app.state.catalogs))
