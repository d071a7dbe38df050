"""boto3 clients for S3: built from one session per process, so botocore's S3 model is read from
disk once, however many property sets (stores, credentials) the process talks to."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.loaders import JSONFileLoader

from icepurge.stores.s3_client import load_s3_model, s3_client


def test_a_client_for_new_properties_reads_no_model_again(monkeypatch: pytest.MonkeyPatch) -> None:
    load_s3_model()
    read: list[str] = []
    original = JSONFileLoader.load_file

    def spy(self: JSONFileLoader, file_path: str) -> Any:
        read.append(file_path)
        return original(self, file_path)

    monkeypatch.setattr(JSONFileLoader, "load_file", spy)
    fresh = {
        "s3.endpoint": "http://127.0.0.1:9",
        "s3.access-key-id": uuid.uuid4().hex,
        "s3.secret-access-key": uuid.uuid4().hex,
    }
    client = s3_client(fresh, max_connections=2)

    assert client.meta.endpoint_url == "http://127.0.0.1:9"
    assert read == [], f"a new client read botocore's data again: {read}"
