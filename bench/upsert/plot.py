"""bench/results/upsert*.png: the small-batch variants side by side and the target-size curve
(top row); goals 2 to 4 (bottom row). A part the run did not make says "not run"."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bench.upsert.plan import LAYOUTS, OPTIMIZED_COPY, RECOMMENDED_LAYOUT
from bench.upsert.results import BenchResults

if TYPE_CHECKING:
    from matplotlib.axes import Axes

COLOURS = {"runner": "#1f77b4", "recipe": "#ff7f0e", "recipe-tuned": "#ffbb78", "append": "#2ca02c"}


def write_plot(results: BenchResults, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # no display: files only
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 3, figsize=(15, 9.6))
    (walls, batches, curve), (large, fresh, scans) = axes
    if results.variants:
        small_batches(results, walls, batches)
    else:
        not_run(walls, "goal 1: small batches")
        not_run(batches, "goal 1: small batches")
    target_size_curve(results, curve)
    large_batches(results, large)
    freshness(results, fresh)
    small_files(results, scans)

    when = results.started_at.strftime("%Y-%m-%d %H:%M UTC")
    figure.suptitle(f"Upsert bench, size {results.size.label} ({when}, load {results.load_start})")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def small_batches(results: BenchResults, walls: Axes, batches: Axes) -> None:
    names = list(results.variants)
    colours = [COLOURS.get(n, "grey") for n in names]
    bars = walls.bar(names, [results.variants[n].wall for n in names], color=colours)
    walls.set_title("goal 1: process wall (s)")
    walls.bar_label(bars, fmt="%.0f")
    goal_line(walls, 0.9 * results.variants["recipe-tuned"].wall, "goal: runner ≤ 0.9 × tuned")
    cycles = [results.variants[n].median_cycle or 0.0 for n in names]
    bars = batches.bar(names, cycles, color=colours)
    batches.set_title("goal 1: median start to next start (s)")
    batches.bar_label(bars, fmt="%.2f")
    tuned = results.variants["recipe-tuned"].median_cycle
    if tuned:
        goal_line(batches, 0.9 * tuned, "goal: runner ≤ 0.9 × tuned")


def target_size_curve(results: BenchResults, curve: Axes) -> None:
    size = results.size
    curve.set_title(f"goal 5: {size.curve_batch_events:,}-event batches vs target rows")
    if not results.curve:
        not_run(curve, "")
        return
    curve.set_xscale("log")
    curve.set_xlabel("target rows")
    curve.set_ylabel("median batch (s)")
    for layout in LAYOUTS:
        points = sorted((p for p in results.curve if p.layout == layout.name), key=lambda p: p.rows)
        label = layout.name + (" (recommended)" if layout.name == RECOMMENDED_LAYOUT else "")
        curve.plot(
            [p.rows for p in points],
            [p.result.median_batch for p in points],
            marker="o",
            label=label,
        )
    curve.legend(loc="upper left", fontsize="small")
    curve.set_ylim(bottom=0)


def large_batches(results: BenchResults, axes: Axes) -> None:
    large = results.size.large
    axes.set_title(f"goal 2: events/s, {large.events:,}-event batches, {large.target_rows:,} rows")
    if not results.large:
        not_run(axes, "")
        return
    names = list(results.large[0].variants)
    width = 0.8 / len(names)
    for offset, name in enumerate(names):
        xs = [i + offset * width for i in range(len(results.large))]
        values = [case.events_per_second(name) for case in results.large]
        bars = axes.bar(xs, values, width, label=name, color=COLOURS.get(name, "grey"))
        axes.bar_label(bars, fmt="%.0f", fontsize="small")
    axes.set_xticks(
        [i + width * (len(names) - 1) / 2 for i in range(len(results.large))],
        [f"{case.skew} keys" for case in results.large],
    )
    axes.legend(loc="upper right", fontsize="small")
    axes.margins(y=0.3)  # room above the bars' labels for the legend


def freshness(results: BenchResults, axes: Axes) -> None:
    axes.set_title("goal 3: file landed to rows visible (s)")
    if not results.freshness:
        not_run(axes, "")
        return
    names = list(results.freshness)
    for offset, (label, values) in enumerate(
        (
            ("p50", [results.freshness[n].p50 for n in names]),
            ("p95", [results.freshness[n].p95 for n in names]),
        )
    ):
        bars = axes.bar([i + offset * 0.4 for i in range(len(names))], values, 0.4, label=label)
        axes.bar_label(bars, fmt="%.1f", fontsize="small")
    axes.set_xticks([i + 0.2 for i in range(len(names))], names)
    axes.legend(loc="upper right", fontsize="small")
    axes.margins(y=0.2)


def small_files(results: BenchResults, axes: Axes) -> None:
    batches = results.size.small_files.orders.files
    axes.set_title(f"goal 4: full scan after {batches} batches / OPTIMIZEd copy")
    if not results.small_files:
        not_run(axes, "")
        return
    copy = results.small_files[OPTIMIZED_COPY].scan_seconds
    names = [n for n in results.small_files if n != OPTIMIZED_COPY]
    bars = axes.bar(names, [results.small_files[n].scan_seconds / copy for n in names])
    axes.bar_label(
        bars,
        labels=[f"{results.small_files[n].files} files" for n in names],
        fontsize="small",
    )
    axes.tick_params(axis="x", labelsize="small", labelrotation=15)
    goal_line(axes, 1.2, "goal: ≤ 1.2 × the copy")


def not_run(axes: Axes, what: str) -> None:
    if what:
        axes.set_title(what)
    axes.text(0.5, 0.5, "not run", ha="center", transform=axes.transAxes)
    axes.set_xticks([])
    axes.set_yticks([])


def goal_line(axes: Axes, value: float, label: str) -> None:
    axes.axhline(value, linestyle="--", color="grey", label=label)
    axes.margins(y=0.2)  # room above the bars' labels for the legend
    axes.legend(loc="upper right", fontsize="small")
