"""The stack tier's files start longest first (tests/file_order.py), from measured seconds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.file_order import file_seconds, longest_first, measured_seconds

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class _Item:
    nodeid: str


def test_files_start_longest_first_and_keep_their_tests_in_order() -> None:
    items = [
        _Item("tests/a.py::one"),
        _Item("tests/a.py::two"),
        _Item("tests/b.py::one"),
        _Item("tests/new.py::one"),
        _Item("tests/c.py::one"),
        _Item("tests/c.py::two"),
        _Item("tests/d.py::one"),
    ]
    seconds = {"tests/a.py": 5.0, "tests/b.py": 300.0, "tests/c.py": 40.0, "tests/d.py": 100.0}

    ordered = [item.nodeid for item in longest_first(items, seconds)]

    # A file not measured counts as the median (70 s): between d.py and c.py.
    assert ordered == [
        "tests/b.py::one",
        "tests/d.py::one",
        "tests/new.py::one",
        "tests/c.py::one",
        "tests/c.py::two",
        "tests/a.py::one",
        "tests/a.py::two",
    ]


def test_a_durations_report_sums_each_files_setup_call_and_teardown() -> None:
    report = """
============================= slowest durations =============================
472.59s call     tests/system/test_chaos.py::test_every_promise_holds
27.35s setup    tests/activities/delete/test_spark_engine.py::test_parity[local]
3.00s call     tests/activities/delete/test_spark_engine.py::test_parity[local]
0.65s teardown tests/activities/delete/test_spark_engine.py::test_parity[spark]
[gw0] [ 19%] PASSED tests/api/server/test_http_api.py::test_errors_name_the_problem
"""
    assert file_seconds(report) == {
        "tests/system/test_chaos.py": 472.6,
        "tests/activities/delete/test_spark_engine.py": 31.0,
    }


def test_every_measured_file_exists() -> None:
    measured = measured_seconds()
    assert len(measured) > 50, "tests/file_seconds.json holds too few files to order the tier"
    assert [file for file in measured if not (ROOT / file).is_file()] == []
