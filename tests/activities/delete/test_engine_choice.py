"""Where engine `auto` switches to Spark, per kind of store: the measured defaults, the operator's
one number, and per-store settings."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from icepurge.activities.delete.engine_choice import AutoSparkThresholds
from icepurge.contract.schemes import store_kind
from icepurge.worker.settings import WorkerSettings


def test_each_location_is_one_kind_of_store() -> None:
    assert store_kind("s3a://bucket/t/metadata/v1.json") == "s3"
    assert store_kind("abfss://c@acct.dfs.core.windows.net/t/metadata/v1.json") == "azure"
    assert store_kind("wasb://c@acct.blob.core.windows.net/t") == "azure"
    assert store_kind("file:///lake/t") == store_kind("/lake/t") == "file"
    assert store_kind("gs://bucket/t") == store_kind("gcs://bucket/t") == "gcs"
    assert store_kind("hdfs://namenode/t") == "other"


def test_by_default_auto_stays_local_where_spark_was_never_faster() -> None:
    defaults = AutoSparkThresholds()
    for location in ("s3://b/t", "file:///t", "gs://b/t"):
        assert not defaults.picks_spark(location, 10_000_000)
    for unmeasured in ("hdfs://namenode/t", "abfs://c@a.dfs.core.windows.net/t"):
        assert defaults.picks_spark(unmeasured, 100_000)
        assert not defaults.picks_spark(unmeasured, 99_999)


def test_the_operators_number_applies_everywhere_and_a_store_setting_wins() -> None:
    chosen = AutoSparkThresholds(everywhere=50, by_store={"azure": 1_000, "file": None})
    assert chosen.picks_spark("s3://b/t", 50)
    assert not chosen.picks_spark("abfs://c@a.dfs.core.windows.net/t", 999)
    assert chosen.picks_spark("abfs://c@a.dfs.core.windows.net/t", 1_000)
    assert not chosen.picks_spark("file:///t", 10_000_000)


def test_per_store_thresholds_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICEPURGE_STATE_LOCATION", "file:///tmp/state")
    monkeypatch.setenv("ICEPURGE_AUTO_SPARK_MIN_FILES_BY_STORE", '{"s3": 200000, "other": null}')
    auto = WorkerSettings().activity_settings().auto_spark
    assert auto.picks_spark("s3://b/t", 200_000)
    assert not auto.picks_spark("hdfs://namenode/t", 10_000_000)


def test_an_unknown_store_kind_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValidationError, match="unknown stores \\['gs'\\]; use s3, azure, gcs, file, other"):
        WorkerSettings(state_location="file:///tmp/state", auto_spark_min_files_by_store={"gs": 1})
