"""Paired baselines spread over the long purge: K pairs at its K+1 equal parts, each due once, and
its whole rate read against the pairs' median baseline."""

from __future__ import annotations

from bench.paired_baselines import Pair, PairedBaselines


async def _never(_: tuple[str, ...]) -> str:
    raise AssertionError("no baseline starts in these tests")


def _baselines(count: int) -> PairedBaselines:
    return PairedBaselines([("bench", f"pair{index}") for index in range(count)], _never)


def test_each_pair_is_due_past_its_part_of_the_long_purge() -> None:
    pairs = _baselines(3)
    assert next(done for done in range(0, 101) if pairs.due(done, 100)) == 25
    pairs.pairs.append(Pair(25, 1.0, 1.0))
    assert not pairs.due(49, 100)
    assert pairs.due(50, 100)
    pairs.pairs += [Pair(50, 1.0, 1.0), Pair(75, 1.0, 1.0)]
    assert not pairs.due(100, 100)


def test_the_summary_reads_the_whole_rate_against_the_median_baseline() -> None:
    pairs = _baselines(3)
    pairs.pairs += [Pair(25, 900.0, 1000.0), Pair(50, 1800.0, 2000.0), Pair(75, 1500.0, 1500.0)]
    pairs.paused_seconds = 42.4
    ratios, whole = pairs.summary(1200.0)
    assert ratios.endswith("0.90x, 0.90x, 1.00x (median 0.90x)")
    assert "42 s of pauses left out: 1,200 tables/min, 0.80x" in whole
    assert whole.endswith("the baselines' median (1,500; 1,000-2,000)")


def test_no_pair_is_said_when_the_long_purge_ended_first() -> None:
    assert _baselines(2).summary(1000.0) == ["no pair was taken: the long purge ended first"]
