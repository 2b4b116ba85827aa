"""bench/results/upsert*.md from the bench's results."""

from __future__ import annotations

import os
import statistics
from collections.abc import Iterable

from bench.upsert.plan import LAYOUTS, RECIPES, curve_files
from bench.upsert.results import BenchResults, VariantResult, medians_of, mib

# issue #12, full size on a quiet 2-core machine: (wall s, median batch s)
ISSUE_REFERENCE = {"runner": (225.0, 2.35), "recipe": (340.0, 5.14), "append": (107.0, 0.39)}
PROGRESS_PHASES = ("addBatch", "triggerExecution", "latestOffset", "queryPlanning", "walCommit")


def markdown(results: BenchResults) -> str:
    lines = [
        *header(results),
        *variants_table(results),
        *goals_table(results),
        *curve_table(results),
        *runner_breakdown(results.variants["runner"]),
        *merge_metrics(results),
        *handwritten_triggers(results),
        *reproduce(results),
        *NOTES,
    ]
    return "\n".join(lines) + "\n"


def header(results: BenchResults) -> list[str]:
    size, inputs = results.size, results.inputs
    when = results.started_at.strftime("%Y-%m-%d %H:%M UTC")
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)
    title = f"# Upsert bench, size {size.label}"
    if size.name != "full":
        title += " (a check of the harness: the goals are judged on `--size full`)"
    jvm = f" RUNNER_JVM_OPTIONS={results.jvm_options!r}." if results.jvm_options else ""
    return [
        title,
        "",
        f"`{results.command}`, {when}, commit {results.commit}, {os.cpu_count()} CPUs, "
        f"{memory:.0f} GiB. Load average (1/5/15 min) at the start {results.load_start}, "
        f"at the end {results.load_end}. Whole bench {results.wall:.0f} s.{jvm}",
        "",
        f"Input: {inputs.files} files (one micro-batch each) of {inputs.events:,} order events "
        f"on {inputs.orders:,} orders, with {inputs.duplicates:,} exact duplicates within a "
        f"file, {inputs.late:,} late events (older than an event of the order already seen) "
        f"and {inputs.deletes:,} deletes. Checked: the runner's and both recipes' targets hold "
        f"the same {inputs.expected_rows:,} rows, the rows expected from applying the files in "
        "order; the append's target holds every event.",
        "",
    ]


def variants_table(results: BenchResults) -> list[str]:
    every = results.size.optimize_every
    described = {
        "runner": f"`runner run`: dedupe view + MERGE, OPTIMIZE every {every}",
        "recipe": f"hand-written foreachBatch: row_number view + MERGE, OPTIMIZE every {every}; "
        "as the seeds write it, on Spark's defaults (200 shuffle partitions, Delta's 50 "
        "snapshot partitions)",
        "recipe-tuned": "the same recipe on the runner's Spark settings for shuffle and "
        "snapshot partitions",
        "append": "plain Delta append of each batch",
    }
    lines = [
        "## Three ways to land the same batches (the recipe twice)",
        "",
        "| variant | what it runs | process wall (s) | before the first batch (s) "
        "| median batch (s) | median start to next start (s) | batches | peak memory (MiB) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, result in results.variants.items():
        cycle = "-" if result.median_cycle is None else f"{result.median_cycle:.2f}"
        lines.append(
            f"| {name} | {described[name]} | {result.wall:.1f} | {result.startup:.1f} "
            f"| {result.median_batch:.2f} | {cycle} | {len(result.batches)} "
            f"| {mib(result.peak_rss):.0f} |"
        )
    if results.size.name == "full":
        lines += ["", "Issue #12's figures (full size, a quiet machine):", ""]
        lines += [
            f"- {name}: {wall:.0f} s wall, {batch:.2f} s median batch"
            for name, (wall, batch) in ISSUE_REFERENCE.items()
        ]
    return [*lines, ""]


def goals_table(results: BenchResults) -> list[str]:
    lines = ["## Goals of issue #33", "", "| goal | measured | limit | |", "|---|---|---|---|"]
    for goal in results.goals():
        limit = "-" if goal.limit is None else f"≤ {goal.limit:g}"
        lines.append(f"| {goal.text} | {goal.shown} | {limit} | {goal.verdict} |")
    return [*lines, ""]


def curve_table(results: BenchResults) -> list[str]:
    if not results.curve:
        return ["## Target-size curve", "", "Not run (`--no-curve`).", ""]
    size = results.size
    smallest = {
        layout.name: min(
            (p for p in results.curve if p.layout == layout.name), key=lambda p: p.rows
        ).result.median_batch
        for layout in LAYOUTS
    }
    lines = [
        "## Target-size curve",
        "",
        f"The same {size.curve_batches} batches of {size.curve_batch_events:,} events (about "
        "20% new orders, the rest updates of orders drawn uniformly from the whole target) "
        "through `runner run` with `merge(delete_column='op')`, against targets pre-built in "
        "one write. Layouts: "
        + "; ".join(f"**{layout.name}**: {layout.description}" for layout in LAYOUTS)
        + ". MERGE columns: Delta's operation metrics, median per batch. Rows copied near "
        "the target's size mean every file held a key of the batch and was rewritten "
        "(copy-on-write): with keys drawn from the whole target, range pruning has nothing to "
        "skip, whatever the layout.",
        "",
        "| target rows | layout | files | median batch (s) | × smallest | MERGE scan (ms) "
        "| rewrite (ms) | files rewritten | rows copied | peak memory (MiB) | wall (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for point in sorted(results.curve, key=lambda p: (p.layout, p.rows)):
        result, merge = point.result, point.result.merge_medians()
        lines.append(
            f"| {point.rows:,} | {point.layout} | {curve_files(point.rows)} "
            f"| {result.median_batch:.2f} | {result.median_batch / smallest[point.layout]:.2f} "
            f"| {_metric(merge, 'scanTimeMs')} | {_metric(merge, 'rewriteTimeMs')} "
            f"| {_metric(merge, 'numTargetFilesRemoved')} "
            f"| {_metric(merge, 'numTargetRowsCopied')} "
            f"| {mib(result.peak_rss):.0f} | {result.wall:.1f} |"
        )
    return [*lines, ""]


def runner_breakdown(runner: VariantResult) -> list[str]:
    """Where the runner's batch time goes, from what its event log has."""
    by_keyword: dict[str, list[float]] = {}
    outside = []
    for batch in runner.batches:
        for keyword, seconds in batch.statements:
            by_keyword.setdefault(keyword, []).append(seconds)
        outside.append(batch.seconds - sum(seconds for _, seconds in batch.statements))
    lines = [
        "## Where the runner's batch time goes",
        "",
        "From the event log: each statement's seconds (median over the batches that ran it), "
        "the rest of the batch, and the time between batches (the event log's own Delta "
        "commits date each batch's row). Medians of parts need not add up to the whole.",
        "",
        "| part | median (s) |",
        "|---|---|",
        f"| the batch (event log `seconds`) | {runner.median_batch:.2f} |",
        *(
            f"| {keyword} ({len(values)} batches) | {statistics.median(values):.2f} |"
            for keyword, values in by_keyword.items()
        ),
        "| outside the statements: source read, JSON split and parse, persist, row count, "
        f"quarantine check, render | {statistics.median(outside):.2f} |",
    ]
    between = runner.between_batches()
    if between is not None:
        lines += [
            f"| from the batch's end to the next batch's start | {between['gap']:.2f} |",
            "| ... of which the event-log write (to the Delta commit of the batch's row) "
            f"| {between['event_log_write']:.2f} |",
            "| ... and then the checkpoint's commit, the next trigger's file listing and "
            f"planning | {between['rest']:.2f} |",
        ]
    lines += ["", *phase_breakdown(runner)]
    return [*lines, ""]


def phase_breakdown(runner: VariantResult) -> list[str]:
    """Medians of the event log's per-phase timings (what `runner history --timings` shows per
    batch); a line saying they are missing for an event log written before they existed."""
    phases = [batch.phases for batch in runner.batches if batch.phases]
    if not phases:
        return [
            "Per-phase timings (source read and persist, render, each statement, Delta "
            "commits, event-log write, checkpoint commit): not in this runner's event log."
        ]
    names = list(dict.fromkeys(name for p in phases for name in p))
    found = medians_of(phases, names)
    return [
        "Per-phase timings from the event log (median over batches):",
        "",
        "| phase | median (s) |",
        "|---|---|",
        *(f"| {name} | {seconds:.2f} |" for name, seconds in found.items()),
    ]


def merge_metrics(results: BenchResults) -> list[str]:
    upserts = {n: results.variants[n].merge_medians() for n in ("runner", *RECIPES)}
    keys = list(dict.fromkeys(k for medians in upserts.values() for k in medians))
    if not keys:
        return []
    lines = [
        "Delta's own MERGE metrics (DESCRIBE HISTORY), median per batch:",
        "",
        "| metric | " + " | ".join(upserts) + " |",
        "|---|" + "---|" * len(upserts),
    ]
    lines += [
        f"| {key} | " + " | ".join(_metric(upserts[n], key) for n in upserts) + " |" for key in keys
    ]
    return [*lines, ""]


def handwritten_triggers(results: BenchResults) -> list[str]:
    variants = [results.variants[n] for n in (*RECIPES, "append")]
    lines = [
        "Spark's own durations per trigger of the hand-written variants "
        "(StreamingQueryProgress.durationMs, median, ms): `addBatch` is the foreachBatch call, "
        "`triggerExecution` the whole trigger.",
        "",
        "| variant | " + " | ".join(PROGRESS_PHASES) + " |",
        "|---|" + "---|" * len(PROGRESS_PHASES),
    ]
    for result in variants:
        found = medians_of(result.progress, PROGRESS_PHASES)
        lines.append(
            f"| {result.name} | " + " | ".join(_metric(found, p) for p in PROGRESS_PHASES) + " |"
        )
    return [*lines, ""]


def reproduce(results: BenchResults) -> list[str]:
    return [
        "## How to reproduce",
        "",
        "```bash",
        "bash bench/upsert.sh --size full    # issue #12's input; on a quiet machine",
        "bash bench/upsert.sh --size small   # every part at small sizes: a check of the harness",
        "```",
        "",
        "It installs what it needs (scripts/bootstrap.sh, then the `bench` extra: matplotlib), "
        "generates the input (seeded: the same files every run), runs each step as its own "
        "process (its own JVM, built from the same project.yml target as the runner's), checks "
        "the targets, and writes this file and its plot (`upsert.md` / `upsert.png` for full, "
        f"`upsert-{results.size.name}.*` for another size). Each step's output, the generated "
        f"projects and the input stay in `target/bench/upsert-{results.size.name}/`. "
        "`--no-curve` skips the target-size curve.",
        "",
    ]


NOTES = [
    "## How the figures are taken",
    "",
    "- **process wall**: from starting the step's process to its exit: Python, the JVM, the",
    "  target's set-up, every batch, and the JVM's stop.",
    "- **median batch**: the runner's from its event log (`seconds`: from the start of the",
    "  foreachBatch call to just before its event-log write); the recipe's and the append's",
    "  timed around their whole foreachBatch function.",
    "- **start to next start**: the median time from one batch's start to the next one's,",
    "  for all three alike: the batch plus what Spark and the variant do between batches.",
    "- **peak memory**: the largest sum of RSS over the step's process tree (Python, the",
    "  JVM, Spark's Python workers), sampled from /proc every 0.25 s; shared pages count once",
    "  per process, so it is an upper bound.",
    "- **load average**: the machine is shared; compare runs only at similar load.",
]


def _metric(values: dict[str, float], key: str) -> str:
    value = values.get(key)
    return "-" if value is None else f"{value:,.0f}"


def summary_lines(results: BenchResults) -> Iterable[str]:
    """What the bench prints at the end: the goals."""
    for goal in results.goals():
        limit = "" if goal.limit is None else f" (goal ≤ {goal.limit:g})"
        yield f"{goal.text}: {goal.shown}{limit} {goal.verdict}"
