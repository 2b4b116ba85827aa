"""The upsert bench's goals (bench/upsert/results.py) and its report, from made-up results: each
goal divides the figures issue #12 names, and the report shows every variant. No JVM."""

from __future__ import annotations

from datetime import UTC, datetime

from bench.upsert.events import InputSummary
from bench.upsert.plan import LAYOUTS, RECOMMENDED_LAYOUT, SIZES
from bench.upsert.report import markdown
from bench.upsert.results import Batch, BenchResults, CurvePoint, VariantResult

SIZE = SIZES["full"]


def variant(name: str, wall: float, batch: float) -> VariantResult:
    batches = tuple(Batch(i, 1_000.0 + 10 * i, batch) for i in range(3))
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
            "recipe-tuned": variant("recipe-tuned", 120.0, 1.8),
            "append": variant("append", 40.0, 0.25),
        },
        curve=[
            CurvePoint(rows, layout, variant(f"{layout}-{rows}", 60.0, seconds))
            for layout, pair in curve_seconds.items()
            for rows, seconds in zip((smallest, largest), pair, strict=True)
        ],
        commit="abc",
    )


def test_goal_3_is_judged_against_the_recipe_as_written_and_the_tuned_one_is_reported() -> None:
    goals = {goal.text: goal for goal in results({}).goals()}
    as_written = goals["3. runner wall / recipe wall (the recipe as written)"]
    assert (as_written.measured, as_written.limit, as_written.verdict) == (0.5, 0.6, "met")
    tuned = next(g for text, g in goals.items() if "recipe-tuned" in text)
    assert (tuned.measured, tuned.verdict) == (1.25, "reported")
    upsert = next(g for text, g in goals.items() if text.startswith("1."))
    assert (upsert.measured, upsert.verdict) == (8.0, "not met")


def test_only_the_recommended_layout_has_a_limit_on_the_target_size_curve() -> None:
    seconds = {layout.name: (2.0, 2.4) for layout in LAYOUTS} | {RECOMMENDED_LAYOUT: (2.0, 3.0)}
    curve = [g for g in results(seconds).goals() if g.text.startswith("2.")]
    assert [g.measured for g in curve] == [
        1.5 if layout.name == RECOMMENDED_LAYOUT else 1.2 for layout in LAYOUTS
    ]
    assert [g.verdict for g in curve] == [
        "not met" if layout.name == RECOMMENDED_LAYOUT else "reported" for layout in LAYOUTS
    ]


def test_the_report_shows_both_recipes_and_every_layout() -> None:
    text = markdown(results({layout.name: (2.0, 2.2) for layout in LAYOUTS}))
    for name in ("runner", "recipe", "recipe-tuned", "append"):
        assert f"\n| {name} | " in text
    for layout in LAYOUTS:
        assert f"| {layout.name} |" in text
    assert "as the seeds write it, on Spark's defaults" in text
