"""bench/results/upsert*.png: the three variants side by side, and the target-size curve."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bench.upsert.plan import LAYOUTS, RECOMMENDED_LAYOUT
from bench.upsert.results import BenchResults

if TYPE_CHECKING:
    from matplotlib.axes import Axes

COLOURS = {"runner": "#1f77b4", "recipe": "#ff7f0e", "recipe-tuned": "#ffbb78", "append": "#2ca02c"}


def write_plot(results: BenchResults, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # no display: files only
    import matplotlib.pyplot as plt

    figure, (walls, batches, curve) = plt.subplots(1, 3, figsize=(15, 4.8))
    names = list(results.variants)
    colours = [COLOURS.get(n, "grey") for n in names]

    wall_values = [results.variants[n].wall for n in names]
    walls.bar(names, wall_values, color=colours)
    walls.set_title("process wall (s)")
    walls.bar_label(walls.containers[0], fmt="%.0f")
    goal_line(walls, 0.6 * results.variants["recipe"].wall, "goal: runner ≤ 0.6 × recipe")

    batch_values = [results.variants[n].median_batch for n in names]
    batches.bar(names, batch_values, color=colours)
    batches.set_title("median batch (s)")
    batches.bar_label(batches.containers[0], fmt="%.2f")
    goal_line(batches, 2 * results.variants["append"].median_batch, "goal: runner ≤ 2 × append")

    size = results.size
    curve.set_title(f"{size.curve_batch_events:,}-event batches vs target rows")
    curve.set_xscale("log")
    curve.set_xlabel("target rows")
    curve.set_ylabel("median batch (s)")
    for layout in LAYOUTS:
        points = sorted((p for p in results.curve if p.layout == layout.name), key=lambda p: p.rows)
        if points:
            curve.plot(
                [p.rows for p in points],
                [p.result.median_batch for p in points],
                marker="o",
                label=layout.name,
            )
    recommended = [p for p in results.curve if p.layout == RECOMMENDED_LAYOUT]
    if recommended:
        smallest = min(recommended, key=lambda p: p.rows).result.median_batch
        goal_line(curve, smallest * 1.3, f"goal: ≤ 1.3 × smallest ({RECOMMENDED_LAYOUT})")
    else:
        curve.text(0.5, 0.5, "not run", ha="center", transform=curve.transAxes)
    curve.set_ylim(bottom=0)

    when = results.started_at.strftime("%Y-%m-%d %H:%M UTC")
    figure.suptitle(
        f"Upsert bench, size {size.label}: {results.inputs.events:,} events in "
        f"{results.inputs.files} batches ({when}, load {results.load_start})"
    )
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def goal_line(axes: Axes, value: float, label: str) -> None:
    axes.axhline(value, linestyle="--", color="grey", label=label)
    axes.margins(y=0.2)  # room above the bars' labels for the legend
    axes.legend(loc="upper right", fontsize="small")
