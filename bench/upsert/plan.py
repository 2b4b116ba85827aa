"""What the upsert bench runs at each size, and the target layouts of its target-size curve.

Pure: no pyspark. `full` is the input of issue #12; `small` exercises every part (the three
variants, OPTIMIZE, the curve with every layout, the plot) in a few minutes, with numbers that
say nothing about the goals.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.upsert.events import OrdersSpec


@dataclass(frozen=True)
class LargeBatches:
    """Goal 2: ``batches`` batches of ``events`` events into a pre-built ``target_rows`` target."""

    target_rows: int
    batches: int
    events: int


@dataclass(frozen=True)
class Freshness:
    """Goal 3: one file a second of ``events_per_second`` events for ``seconds`` seconds, into
    a stream already running."""

    seconds: int
    events_per_second: int
    keys: int


@dataclass(frozen=True)
class SmallFiles:
    """Goal 4: ``orders`` landed one file a batch by each maintenance variant."""

    orders: OrdersSpec
    optimize_every: int


@dataclass(frozen=True)
class BenchSize:
    name: str
    orders: OrdersSpec
    optimize_every: int  # OPTIMIZE after every N-th batch, in the runner and the recipe
    curve_targets: tuple[int, ...]  # rows of the pre-built targets, smallest first
    curve_batches: int
    curve_batch_events: int
    large: LargeBatches
    freshness: Freshness
    small_files: SmallFiles

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
        large=LargeBatches(target_rows=100_000, batches=4, events=5_000),
        freshness=Freshness(seconds=60, events_per_second=200, keys=2_000),
        small_files=SmallFiles(OrdersSpec(files=12, events_per_file=200, keys=2_000), 4),
    ),
    "full": BenchSize(
        name="full",
        orders=OrdersSpec(files=50, events_per_file=2_000, keys=20_000),
        optimize_every=20,
        curve_targets=(20_000, 200_000, 1_000_000),
        curve_batches=10,
        curve_batch_events=2_000,
        large=LargeBatches(target_rows=5_000_000, batches=20, events=100_000),
        freshness=Freshness(seconds=600, events_per_second=2_000, keys=200_000),
        small_files=SmallFiles(OrdersSpec(files=500, events_per_file=1_000, keys=20_000), 20),
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


# Goal 2's key draws: "recent" (most updates hit the newest keys, as orders are updated soon
# after they are placed) and "uniform" (any key of the target, the target-size curve's draw).
SKEWS = ("recent", "uniform")
LARGE_VARIANTS = ("runner", "recipe-tuned", "append")
# Goal 3's streams: the runner and the recipe with OPTIMIZE every N batches, as the seeds
# write it, and the runner once more without maintenance: how far OPTIMIZE pushes p95 up
NO_OPTIMIZE = "runner-no-optimize"
FRESHNESS_VARIANTS = ("runner", "recipe-tuned", NO_OPTIMIZE)
FRESHNESS_TRIGGER = "500 milliseconds"  # both streams' processing-time trigger


@dataclass(frozen=True)
class Maintenance:
    """Goal 4: how a variant keeps the target's files few; the runner's config() options."""

    name: str
    description: str
    optimize_every: bool = False  # the size's optimize_every with ZORDER BY the key
    table_properties: tuple[tuple[str, str], ...] = ()


# Delta 4.4's table properties (DeltaConfigs: delta.autoOptimize.autoCompact, whose session
# counterpart is spark.databricks.delta.autoCompact.enabled; delta.autoOptimize.optimizeWrite)
MAINTENANCE = (
    Maintenance("none", "no maintenance (the runner's default: no optimize_every)"),
    Maintenance(
        "optimize-every",
        "config(optimize_every=N, zorder_by=['order_id']): OPTIMIZE ZORDER after every N-th "
        "batch, in the batch",
        optimize_every=True,
    ),
    Maintenance(
        "auto-compact",
        "table property delta.autoOptimize.autoCompact=true: Delta compacts after a commit "
        "once a directory holds enough small files (autoCompact.minNumFiles, 50 by default)",
        table_properties=(("delta.autoOptimize.autoCompact", "true"),),
    ),
    Maintenance(
        "optimized-writes",
        "table property delta.autoOptimize.optimizeWrite=true: each write shuffles its rows "
        "into fewer, larger files",
        table_properties=(("delta.autoOptimize.optimizeWrite", "true"),),
    ),
)
RUNNER_DEFAULT_MAINTENANCE = "none"
MAINTENANCE_NAMES = tuple(m.name for m in MAINTENANCE)
OPTIMIZED_COPY = "optimized-copy"  # goal 4's reference: the target without maintenance, OPTIMIZEd
SCAN_REPEATS = 5  # goal 4's full-scan query, timed this many times after one to warm up
# every column read (a count alone Delta may answer from the log's statistics)
SCAN_QUERY = (
    "SELECT count(*), sum(amount), count(DISTINCT customer_id), max(status), max(updated_at), "
    "max(order_id) FROM delta.`{location}`"
)
