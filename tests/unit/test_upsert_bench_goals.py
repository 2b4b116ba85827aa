"""The upsert bench's goals (bench/upsert/results.py) and its report, from made-up results: each
goal divides the figures issue #33 names, a goal not measured says so, and the report shows
every variant. No JVM."""

from __future__ import annotations

import argparse
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from bench.upsert.events import InputSummary
from bench.upsert.plan import LAYOUTS, NO_OPTIMIZE, OPTIMIZED_COPY, RECOMMENDED_LAYOUT, SIZES
from bench.upsert.report import markdown
from bench.upsert.results import (
    Batch,
    BenchResults,
    CurvePoint,
    FreshnessResult,
    LargeCase,
    SmallFilesResult,
    VariantResult,
    throughput,
)

SIZE = SIZES["full"]


def variant(name: str, wall: float, batch: float, cycle: float = 10.0) -> VariantResult:
    batches = tuple(Batch(i, 1_000.0 + cycle * i, batch) for i in range(3))
    return VariantResult(name, 990.0, wall, 1 << 30, batches)


def results(curve_seconds: dict[str, tuple[float, float]]) -> BenchResults:
    smallest, largest = min(SIZE.curve_targets), max(SIZE.curve_targets)
    return BenchResults(
        size=SIZE,
        command="test",
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
        load_start="0.1",
        load_end="0.2",
        wall=1.0,
        inputs=InputSummary(50, 105_000, 19_823, 5_000, 2_978, 2_061, 19_397),
        variants={
            "runner": variant("runner", 150.0, 2.0),
            "recipe": variant("recipe", 300.0, 5.0),
            "recipe-tuned": variant("recipe-tuned", 120.0, 1.8, cycle=8.0),
            "append": variant("append", 40.0, 0.25),
        },
        curve=[
            CurvePoint(rows, layout, variant(f"{layout}-{rows}", 60.0, seconds))
            for layout, pair in curve_seconds.items()
            for rows, seconds in zip((smallest, largest), pair, strict=True)
        ],
        commit="abc",
    )


def test_goal_1_is_judged_against_the_tuned_recipe_and_goal_5_against_the_seeds_one() -> None:
    goals = {goal.text: goal for goal in results({}).goals()}
    cycle = goals["1. median start to next start, runner / recipe-tuned (small batches)"]
    assert (cycle.measured, cycle.limit, cycle.verdict) == (1.25, 0.9, "not met")
    wall = goals["1. process wall, runner / recipe-tuned (small batches)"]
    assert (wall.measured, wall.verdict) == (1.25, "not met")
    as_written = goals["5. process wall, runner / recipe as the seeds write it"]
    assert (as_written.measured, as_written.limit, as_written.verdict) == (0.5, 0.5, "met")
    memory = [g for text, g in goals.items() if "peak memory" in text]
    assert [(g.measured, g.verdict) for g in memory] == [(1024.0, "reported")] * 4


def test_goals_the_bench_does_not_run_yet_say_so() -> None:
    goals = results({}).goals()
    unmeasured = [g.text[:2] for g in goals if g.verdict == "not measured"]
    assert unmeasured == ["2.", "3.", "3.", "4."] + ["5."] * len(LAYOUTS)  # no curve in this run
    assert all(g.shown == "-" for g in goals if g.verdict == "not measured")


def test_the_target_size_curve_is_reported_for_every_layout() -> None:
    seconds = {layout.name: (2.0, 2.4) for layout in LAYOUTS} | {RECOMMENDED_LAYOUT: (2.0, 3.0)}
    curve = [g for g in results(seconds).goals() if ", layout " in g.text]
    assert [g.measured for g in curve] == [
        1.5 if layout.name == RECOMMENDED_LAYOUT else 1.2 for layout in LAYOUTS
    ]
    assert {g.verdict for g in curve} == {"reported"}


def test_the_report_shows_both_recipes_and_every_layout() -> None:
    text = markdown(results({layout.name: (2.0, 2.2) for layout in LAYOUTS}))
    for name in ("runner", "recipe", "recipe-tuned", "append"):
        assert f"\n| {name} | " in text
    for layout in LAYOUTS:
        assert f"| {layout.name} |" in text
    assert "as the seeds write it, on Spark's defaults" in text


def test_throughput_counts_from_the_first_batch_start_to_the_last_batch_end() -> None:
    batches = (Batch(0, 100.0, 4.0), Batch(1, 106.0, 4.0))  # 100 .. 110
    assert throughput(batches, 1_000) == 100.0


def test_goal_2_is_a_floor_on_the_runners_events_per_second() -> None:
    def case(skew: str, runner_seconds: float) -> LargeCase:
        variants = {
            name: VariantResult(name, 0.0, 60.0, 1 << 30, (Batch(0, 10.0, seconds),))
            for name, seconds in (("runner", runner_seconds), ("recipe-tuned", 10.0))
        }
        return LargeCase(skew, 5_000_000, 100_000, 2_000_000, variants)

    found = replace(results({}), large=[case("recent", 8.0), case("uniform", 10.0)])
    ratios = [g for g in found.goals() if g.text.startswith("2. events/s, runner / ")]
    assert [(g.measured, g.limit_text, g.verdict) for g in ratios] == [
        (1.25, "≥ 1.1", "met"),
        (1.0, "≥ 1.1", "not met"),
    ]
    assert "| recent | runner | 250,000 |" in markdown(found)


def test_goal_3_compares_the_p95s_and_goal_4_the_runners_default_with_the_copy() -> None:
    fresh = {
        name: FreshnessResult(
            name, 700.0, 1 << 30, tuple(float(s) * k for s in range(1, 21)), 20, 9
        )
        for name, k in (("runner", 1.0), ("recipe-tuned", 2.0), (NO_OPTIMIZE, 0.8))
    }
    scans = {
        name: SmallFilesResult(name, files, seconds)
        for name, files, seconds in (
            ("none", 500, 1.3),
            ("optimize-every", 30, 1.1),
            (OPTIMIZED_COPY, 1, 1.0),
        )
    }
    goals = {g.text: g for g in replace(results({}), freshness=fresh, small_files=scans).goals()}
    p95 = goals["3. p95 file landed to rows visible, runner / recipe-tuned"]
    assert (p95.measured, p95.verdict) == (0.5, "met")
    assert goals["3. p50 file landed to rows visible, runner (s)"].measured == 10.0
    pushed = [g for text, g in goals.items() if "must not push p95 up" in text]
    assert [(g.measured, g.verdict) for g in pushed] == [(1.25, "not met")]
    assert "runner with OPTIMIZE every" in next(t for t in goals if "must not push" in t)
    default = [g for text, g in goals.items() if "(the runner's default)" in text]
    assert [(g.measured, g.limit, g.verdict) for g in default] == [(1.3, 1.2, "not met")]
    other = [g for text, g in goals.items() if "optimize-every maintenance" in text]
    assert [(g.measured, g.verdict) for g in other] == [(1.1, "reported")]


def test_between_batches_reads_when_each_row_was_logged_else_the_event_log_commits() -> None:
    """A stream's rows say when they were handed to their files (appended later, together);
    rows appended in their batch are dated by one event-log commit each."""
    logged = VariantResult(
        "runner",
        0.0,
        60.0,
        1 << 30,
        tuple(Batch(i, 100.0 + 2.0 * i, 1.5, logged=101.5 + 2.0 * i + 0.01) for i in range(3)),
        event_log_commits=(130.0,),  # one append of all three rows, long after
    )
    assert logged.between_batches() == pytest.approx(
        {"gap": 0.5, "event_log_write": 0.01, "rest": 0.49}
    )
    appended = VariantResult(
        "runner",
        0.0,
        60.0,
        1 << 30,
        tuple(Batch(i, 100.0 + 2.0 * i, 1.5) for i in range(3)),
        event_log_commits=(101.75, 103.75, 105.75),
    )
    assert appended.between_batches() == pytest.approx(
        {"gap": 0.5, "event_log_write": 0.25, "rest": 0.25}
    )
    unknown = VariantResult("runner", 0.0, 60.0, 1 << 30, appended.batches, event_log_commits=())
    assert unknown.between_batches() is None


def test_goal_4_may_run_some_maintenance_variants_always_with_the_runners_default() -> None:
    from bench.upsert_bench import maintenance_names, output_paths

    assert maintenance_names("auto-compact,none") == ("none", "auto-compact")
    with pytest.raises(argparse.ArgumentTypeError, match="include 'none'"):
        maintenance_names("auto-compact")
    with pytest.raises(argparse.ArgumentTypeError, match="vacuum: goal 4's variants are"):
        maintenance_names("none,vacuum")
    subset, _ = output_paths(SIZE, frozenset({4}), ("none",))
    assert subset.name == "upsert-goals-4-none.md"
    every, _ = output_paths(SIZE, frozenset({4}))
    assert every.name == "upsert-goals-4.md"


def test_an_event_log_missing_a_batchs_row_stops_the_bench():
    from bench.upsert_bench import event_log_gaps

    def log(*ids: int) -> dict[str, list[dict[str, int]]]:
        return {"rows": [{"batch_id": i} for i in ids]}

    assert event_log_gaps({"runner": log(0, 1, 2), "curve": log()}) == []
    assert event_log_gaps({"runner": log(0, 2, 3, 3)}) == [
        "runner's event log: no row for batch(es) [1], two or more for [3]"
    ]
