"""What the upsert bench runs at each size, and the target layouts of its target-size curve.

Pure: no pyspark. `full` is the input of issue #12; `small` exercises every part (the three
variants, OPTIMIZE, the curve with every layout, the plot) in a few minutes, with numbers that
say nothing about the goals.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.upsert.events import OrdersSpec


@dataclass(frozen=True)
class BenchSize:
    name: str
    orders: OrdersSpec
    optimize_every: int  # OPTIMIZE after every N-th batch, in the runner and the recipe
    curve_targets: tuple[int, ...]  # rows of the pre-built targets, smallest first
    curve_batches: int
    curve_batch_events: int

    @property
    def label(self) -> str:
        """How results name the size: `full`, or `SMALL` so nobody mistakes it for `full`."""
        return self.name if self.name == "full" else self.name.upper()


SIZES = {
    "small": BenchSize(
        name="small",
        orders=OrdersSpec(files=6, events_per_file=500, keys=2_000),
        optimize_every=3,
        curve_targets=(2_000, 20_000, 100_000),
        curve_batches=3,
        curve_batch_events=1_000,
    ),
    "full": BenchSize(
        name="full",
        orders=OrdersSpec(files=50, events_per_file=2_000, keys=20_000),
        optimize_every=20,
        curve_targets=(20_000, 200_000, 1_000_000),
        curve_batches=10,
        curve_batch_events=2_000,
    ),
}

# the seeds' recipe as they write it (Spark's and Delta's defaults: issue #12's baseline), and
# the same recipe on the runner's settings
RECIPES = ("recipe", "recipe-tuned")
ZORDER_BY = "order_id"  # the seeds' recipe Z-orders by the MERGE key; the runner model too
CURVE_ROWS_PER_FILE = 25_000  # pre-built targets: one file per 25,000 rows (at least 2)


@dataclass(frozen=True)
class Layout:
    """How a curve target is laid out and how the runner's merge() is told about it."""

    name: str
    description: str
    cluster_by: tuple[str, ...] = ()
    prune_by: tuple[str, ...] = ()
    table_properties: tuple[tuple[str, str], ...] = ()  # set when the target is built


LAYOUTS = (
    Layout("plain", "files hold random keys; merge() without prune_by"),
    Layout(
        "clustered",
        "liquid clustering by order_id (files hold key ranges); merge() with prune_by=order_id",
        cluster_by=("order_id",),
        prune_by=("order_id",),
    ),
    Layout(
        "deletion-vectors",
        "files hold random keys, with deletion vectors on (a MERGE marks a changed row deleted "
        "instead of rewriting its file); merge() without prune_by",
        table_properties=(("delta.enableDeletionVectors", "true"),),
    ),
)
RECOMMENDED_LAYOUT = "clustered"  # docs/macros/merge.md: prune_by with a layout by the key


def curve_files(rows: int) -> int:
    return max(2, rows // CURVE_ROWS_PER_FILE)
