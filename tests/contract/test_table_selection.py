"""A namespace purge's selection as a request states it: what it refuses (one line, before anything
starts), how it is part of the purge's id, and which tables its rules leave alone and why."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import icepurge.api.cli.main  # noqa: F401  (registers every command on the app)
from icepurge.api.cli.groups import app
from icepurge.contract.namespace_request import (
    NamespacePurgeRequest,
    namespace_purge_id_for,
    parse_namespace_request,
)
from icepurge.contract.table_selection import TableSelection
from icepurge.contract.validation import InvalidPurgeRequestError

BASE = {"catalog": "prod", "namespace": ["sales"], "requested_by": "x"}


def _request(selection: dict[str, object], **more: object) -> NamespacePurgeRequest:
    return parse_namespace_request({**BASE, **more, "selection": selection})


@pytest.mark.parametrize(
    ("selection", "said"),
    [
        ({"names": ["sales.[ab"]}, "opens a [ that it never closes"),
        ({"exclude_names": [""]}, "must not be empty"),
        ({"older_than": "30 days"}, "not a duration"),
        ({"older_than": "-1d"}, "not a duration"),
        ({"older_than": "3x"}, "s, m, h, d or w"),
        ({"properties": ["=v"]}, "names no key"),
        ({"properties": ["!owner=me"]}, "!key takes no value"),
        ({"tables": ["orders"]}, "is not namespace.table"),
        ({"tables": ["hr.people"]}, "is outside prod.sales"),
        ({"tables": ["sales.eu.orders"]}, "outside prod.sales (not recursive)"),
        ({"names": ["*"] * 101}, "at most 100"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_bad_selection_is_refused_in_one_line(selection: dict[str, object], said: str) -> None:
    with pytest.raises(InvalidPurgeRequestError, match=r"\S") as refused:
        _request(selection)
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_a_listed_table_in_a_nested_namespace_is_inside_a_recursive_purge() -> None:
    assert _request({"tables": ["sales.eu.orders"]}, recursive=True).selection is not None
    # A level that holds a dot, as the walk meets its tables' names.
    dotted = {**BASE, "namespace": ["root", "v1.2"], "selection": {"tables": ["root.v1.2.t4"]}}
    assert parse_namespace_request(dotted).selection is not None
    whole = {**BASE, "namespace": [], "confirm": "prod", "selection": {"tables": ["a.b.c"]}}
    assert parse_namespace_request(whole).selection is not None


def test_the_selection_is_part_of_the_id_whatever_its_spelling() -> None:
    plain = namespace_purge_id_for(parse_namespace_request(BASE))
    one = namespace_purge_id_for(_request({"names": ["sales.a*", "sales.b*"], "older_than": "1d"}))
    same = namespace_purge_id_for(
        _request({"names": ["sales.b*", "sales.a*", "sales.b*"], "older_than": "24h"})
    )
    other = namespace_purge_id_for(_request({"names": ["sales.a*"], "older_than": "1d"}))
    assert one == same
    assert len({plain, one, other}) == 3
    # An empty selection selects every table, but it was asked for: an id of its own.
    assert namespace_purge_id_for(_request({})) not in {plain, one, other}


def test_each_kind_of_condition_says_which_table_it_leaves_and_why() -> None:
    selection = TableSelection(
        names=["sales.tmp_*", "sales.eu.*"],
        exclude_names=["*_keep"],
        properties=["team=b", "retention", "!legal_hold"],
        older_than="1h",
    )
    rules = selection.rules(cutoff_ms=10_000_000)
    assert rules.unmet_by_name("sales.tmp_1") is None
    assert rules.unmet_by_name("sales.eu.orders") is None
    assert (
        rules.unmet_by_name("sales.orders") == "unselected: its name matches none of sales.tmp_*, sales.eu.*"
    )
    assert rules.unmet_by_name("sales.tmp_keep") == "unselected: its name matches the excluded *_keep"
    chosen = {"team": "b", "retention": "7d"}
    assert rules.unmet_by_metadata(chosen, last_updated_ms=9_999_999) is None
    assert rules.unmet_by_metadata({**chosen, "team": "a"}, 0) == "unselected: property team is not 'b'"
    assert rules.unmet_by_metadata({"team": "b"}, 0) == "unselected: property retention is not set"
    assert (
        rules.unmet_by_metadata({**chosen, "legal_hold": "x"}, 0) == "unselected: property legal_hold is set"
    )
    assert rules.unmet_by_metadata(chosen, 10_000_000) == "unselected: its last commit is within 1h"
    listed = TableSelection(tables=["sales.a", "sales.b"]).rules(None)
    assert listed.unmet_by_name("sales.a") is None
    assert listed.unmet_by_name("sales.c") == "unselected: not in the listed tables"
    assert not listed.reads_metadata and rules.reads_metadata


def test_the_cli_refuses_a_bad_selection_before_it_connects() -> None:
    # No Temporal or API is configured here: a refusal that tried to connect would say so instead.
    result = CliRunner().invoke(app, ["purge", "namespace", "prod", "sales", "--older-than", "3 days"])
    assert result.exit_code == 2
    assert "not a duration" in result.output and "connect" not in result.output.lower()
