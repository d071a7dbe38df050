"""What `icepurge doctor` and `GET /v1/doctor` answer: one line per check."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from icepurge.contract.roles import Role


class CheckResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    check: str
    outcome: str  # ok, FAIL or skipped
    detail: str

    @property
    def failed(self) -> bool:
        return self.outcome == "FAIL"


class DoctorReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    checks: list[CheckResult]


class TokenInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    roles: list[Role]
    catalogs: list[str]


def ok(check: str, detail: str) -> CheckResult:
    return CheckResult(check=check, outcome="ok", detail=detail)


def fail(check: str, detail: str) -> CheckResult:
    return CheckResult(check=check, outcome="FAIL", detail=detail)


def skipped(check: str, detail: str) -> CheckResult:
    return CheckResult(check=check, outcome="skipped", detail=detail)
