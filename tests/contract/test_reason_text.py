"""A reason shortened for a memo, a listing's column or the Web UI's details keeps what it says to
do: the advice comes last, and a long URL or path before it gives way."""

from __future__ import annotations

from icepurge.contract.reasons import MEMO_TEXT_LIMIT, shortened, waiting_reason

ADVICE = "check s3.endpoint, the region and the credentials in file_io_properties"


def test_a_long_reason_keeps_its_advice_and_its_limit() -> None:
    url = "http://127.0.0.1:25891/warehouse/tests/stuck/no_listener/metadata/" + "0" * 120 + ".metadata.json"
    reason = waiting_reason(
        "plan_and_finish_small",
        2,
        f"StoreUnreachable: cannot reach the object store (EndpointConnectionError: {url}); {ADVICE}",
    )
    assert len(reason) > MEMO_TEXT_LIMIT
    short = shortened(reason)
    assert len(short) == MEMO_TEXT_LIMIT
    assert short.startswith("retrying plan_and_finish_small (attempt 2): StoreUnreachable: cannot reach")
    assert short.endswith(ADVICE)
    assert " … " in short


def test_a_reason_within_the_limit_is_kept_whole() -> None:
    reason = f"MetadataNotFound: s3://warehouse/t/metadata/00001.metadata.json is gone; {ADVICE}"
    assert shortened(reason) == reason
    assert shortened(reason, 60).endswith("in file_io_properties")
    assert len(shortened(reason, 60)) == 60
