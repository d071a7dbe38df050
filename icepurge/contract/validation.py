"""Turns a raw request into a PurgeRequest, or into an error that names the bad fields."""

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from icepurge.contract.request import PurgeOptions, PurgeRequest

ModelT = TypeVar("ModelT", bound=BaseModel)


class InvalidPurgeRequestError(ValueError):
    """The request breaks the contract; the message names each bad field (never its value)."""


def describe_validation_error(error: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(part) for part in issue['loc']) or '(request)'}: {issue['msg']}"
        for issue in error.errors(include_url=False, include_input=False)
    ]
    return "invalid purge request: " + "; ".join(problems)


def parse_as(model: type[ModelT], raw: Any) -> ModelT:
    """Raises InvalidPurgeRequestError naming the bad fields."""
    if isinstance(raw, model):
        return raw
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise InvalidPurgeRequestError(describe_validation_error(error)) from None


def parse_request(raw: Any) -> PurgeRequest:
    return parse_as(PurgeRequest, raw)


def by_name_request(
    catalog: str,
    namespace: list[str],
    table: str,
    *,
    requested_by: str,
    options: PurgeOptions | dict[str, Any] | None = None,
    request_id: str | None = None,
    notify_workflow_id: str | None = None,
) -> PurgeRequest:
    """Raises InvalidPurgeRequestError naming the bad fields."""
    chosen = options.model_dump(mode="json") if isinstance(options, PurgeOptions) else options or {}
    return parse_request(
        {
            "catalog": catalog,
            "namespace": namespace,
            "table": table,
            "requested_by": requested_by,
            "request_id": request_id,
            "notify_workflow_id": notify_workflow_id,
            "options": chosen,
        }
    )
