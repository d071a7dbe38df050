"""What `icepurge doctor` and `GET /v1/doctor` answer: one line per check."""

from __future__ import annotations

from icepurge.contract.roles import Role
from icepurge.contract.strict_model import StrictModel


class CheckResult(StrictModel):
    check: str
    outcome: str  # ok, FAIL or skipped
    detail: str

    @property
    def failed(self) -> bool:
        return self.outcome == "FAIL"


class DoctorReport(StrictModel):
    checks: list[CheckResult]


class TokenInfo(StrictModel):
    name: str
    roles: list[Role]
    catalogs: list[str]


def ok(check: str, detail: str) -> CheckResult:
    return CheckResult(check=check, outcome="ok", detail=detail)


def fail(check: str, detail: str) -> CheckResult:
    return CheckResult(check=check, outcome="FAIL", detail=detail)


def skipped(check: str, detail: str) -> CheckResult:
    return CheckResult(check=check, outcome="skipped", detail=detail)
