"""The published JSON Schemas match the models, and the documented example request is valid."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from pydantic import BaseModel

from icepurge.contract.events import PurgeEvent
from icepurge.contract.identity import RequestIdentity
from icepurge.contract.names import NAMESPACE_ID_PREFIX
from icepurge.contract.namespace_request import (
    NamespacePurgeRequest,
    namespace_purge_id_for,
    parse_namespace_request,
)
from icepurge.contract.namespace_status import NamespacePurgeStatus
from icepurge.contract.purge_id import purge_id_for
from icepurge.contract.request import PurgeRequest
from icepurge.contract.schemas import contract_schemas, render
from icepurge.contract.status import PurgeStatus
from icepurge.contract.validation import InvalidPurgeRequestError
from tests.paths import ROOT


@pytest.mark.parametrize("name", sorted(contract_schemas()))
def test_committed_schema_matches_the_model(name: str) -> None:
    committed = (ROOT / "schemas" / name).read_text()
    assert committed == render(contract_schemas()[name]), f"run `make schemas` and commit schemas/{name}"


def test_the_docs_example_request_is_a_valid_request() -> None:
    page = (ROOT / "docs" / "concepts" / "how-a-purge-works.md").read_text()
    example = re.search(r"<!-- example-request -->\s*```json\n(.*?)```", page, re.DOTALL)
    assert example is not None, "docs/concepts/how-a-purge-works.md lost its example request"
    request = PurgeRequest.model_validate(json.loads(example.group(1)))
    assert request.namespace == ["sales", "eu"]


def test_purge_id_is_stable_and_depends_on_the_snapshot_only() -> None:
    base = {
        "catalog": "c",
        "namespace": ["a", "b"],
        "table": "t",
        "metadata_location": "s3://b/t/metadata/1.metadata.json",
        "requested_by": "x",
    }
    first = purge_id_for(PurgeRequest.model_validate(base))
    assert first == purge_id_for(
        PurgeRequest.model_validate({**base, "requested_by": "y", "request_id": "r"})
    )
    assert first != purge_id_for(PurgeRequest.model_validate({**base, "namespace": ["a.b"]}))
    assert first != purge_id_for(
        PurgeRequest.model_validate({**base, "metadata_location": "s3://b/t/metadata/2.metadata.json"})
    )


def test_purge_ids_begin_with_what_they_purge_and_never_like_a_namespace_purge() -> None:
    by_name = {"catalog": "ns-prod", "namespace": ["sales", "日本"], "table": "orders", "requested_by": "x"}
    table_id = purge_id_for(PurgeRequest.model_validate(by_name))
    assert re.fullmatch(r"icepurge-ns_prod\.sales\._\.orders-[0-9a-f]{32}", table_id)
    assert not table_id.startswith(NAMESPACE_ID_PREFIX)
    long = purge_id_for(
        PurgeRequest.model_validate({**by_name, "table": "t" * 200, "options": {"dry_run": True}})
    )
    assert len(long) == len("icepurge-") + 120 + 1 + 32 + len("-dry-run")
    assert long.endswith("-dry-run")
    namespace_id = namespace_purge_id_for(
        parse_namespace_request({"catalog": "prod", "namespace": ["sales", "eu"], "requested_by": "x"})
    )
    assert re.fullmatch(r"icepurge-ns-prod\.sales\.eu-[0-9a-f]{32}", namespace_id)


def test_a_namespace_purge_id_tells_scopes_apart_and_keeps_earlier_ids() -> None:
    base = {"catalog": "prod", "namespace": ["sales"], "requested_by": "x"}
    flat = namespace_purge_id_for(parse_namespace_request(base))
    recursive = namespace_purge_id_for(parse_namespace_request({**base, "recursive": True}))
    assert flat != recursive
    # Ids of non-recursive and whole-catalog purges are those earlier releases derived.
    identity = json.dumps(["prod", ["sales"], None], separators=(",", ":"))
    assert flat.endswith(hashlib.sha256(identity.encode()).hexdigest()[:32])
    whole = {"catalog": "prod", "namespace": [], "confirm": "prod", "requested_by": "x"}
    assert namespace_purge_id_for(parse_namespace_request(whole)) == namespace_purge_id_for(
        parse_namespace_request({**whole, "recursive": True})
    )


def test_a_confirm_that_is_not_the_catalogs_name_is_refused_whatever_the_scope() -> None:
    with pytest.raises(InvalidPurgeRequestError, match="confirm"):
        parse_namespace_request(
            {"catalog": "prod", "namespace": ["sales"], "confirm": "prdo", "requested_by": "x"}
        )


def test_a_namespace_purge_holds_no_table() -> None:
    with pytest.raises(InvalidPurgeRequestError, match="hold_namespace"):
        parse_namespace_request(
            {
                "catalog": "prod",
                "namespace": ["sales"],
                "requested_by": "x",
                "options": {"hold_namespace": "held"},
            }
        )


@pytest.mark.parametrize(
    "model", [PurgeRequest, NamespacePurgeRequest, PurgeStatus, NamespacePurgeStatus, PurgeEvent]
)
def test_every_model_that_carries_the_identity_declares_all_of_it(model: type[BaseModel]) -> None:
    """identity_of carries RequestIdentity's fields from model to model: each declares them all."""
    for name, field in RequestIdentity.model_fields.items():
        assert model.model_fields[name].annotation == field.annotation, f"{model.__name__}.{name}"
