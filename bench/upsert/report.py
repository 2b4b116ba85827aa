"""bench/results/upsert*.md from the bench's results."""

from __future__ import annotations

import os
import statistics
from collections.abc import Iterable

from bench.upsert.events import RECENT_SHARE, RECENT_WINDOW
from bench.upsert.plan import (
    FRESHNESS_TRIGGER,
    LAYOUTS,
    MAINTENANCE,
    NO_OPTIMIZE,
    OPTIMIZED_COPY,
    RECIPES,
    SCAN_REPEATS,
    curve_files,
)
from bench.upsert.results import BenchResults, VariantResult, medians_of, mib

# issue #12, full size on a quiet 2-core machine: (wall s, median batch s)
ISSUE_REFERENCE = {"runner": (225.0, 2.35), "recipe": (340.0, 5.14), "append": (107.0, 0.39)}
PROGRESS_PHASES = ("addBatch", "triggerExecution", "latestOffset", "queryPlanning", "walCommit")


def markdown(results: BenchResults) -> str:
    small_batches = (
        [
            *variants_table(results),
            *curve_table(results),
            *runner_breakdown(results.variants["runner"]),
            *merge_metrics(results),
            *handwritten_triggers(results),
        ]
        if results.variants
        else []
    )
    lines = [
        *header(results),
        *goals_table(results),
        *small_batches,
        *large_table(results),
        *freshness_table(results),
        *small_files_table(results),
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
    lines = [
        title,
        "",
        f"`{results.command}`, {when}, commit {results.commit}, {os.cpu_count()} CPUs, "
        f"{memory:.0f} GiB. Load average (1/5/15 min) at the start {results.load_start}, "
        f"at the end {results.load_end}. Whole bench {results.wall:.0f} s.{jvm}",
        "",
    ]
    if inputs is None:
        return lines
    return [
        *lines,
        f"Goal 1's input: {inputs.files} files (one micro-batch each) of {inputs.events:,} "
        f"order events on {inputs.orders:,} orders, with {inputs.duplicates:,} exact "
        f"duplicates within a file, {inputs.late:,} late events (older than an event of the "
        f"order already seen) and {inputs.deletes:,} deletes. Checked: the runner's and both "
        f"recipes' targets hold the same {inputs.expected_rows:,} rows, the rows expected from "
        "applying the files in order; the append's target holds every event.",
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
        lines.append(f"| {goal.text} | {goal.shown} | {goal.limit_text} | {goal.verdict} |")
    return [*lines, ""]


def large_table(results: BenchResults) -> list[str]:
    if not results.large:
        return []
    large = results.size.large
    lines = [
        "## Goal 2: large batches",
        "",
        f"{large.batches} batches of {large.events:,} events (about 20% new orders, the rest "
        f"updates) into a pre-built {large.target_rows:,}-row target whose "
        f"{curve_files(large.target_rows)} files hold key ranges (a table filled over time), "
        "one file a batch, no maintenance. **recent** keys: "
        f"{RECENT_SHARE:.0%} of the updates hit the newest {RECENT_WINDOW:.0%} of the orders, "
        "the rest any order; **uniform**: distinct orders drawn from the whole target. "
        "events/s: the events over the time from the first batch's start to the last one's "
        "end. Checked: the runner's and the recipe's rows of every key the batches touch equal "
        "the newest event of each, and both targets hold the pre-built rows plus the orders "
        "inserted; the append's target holds every event.",
        "",
        "| keys | variant | events/s | median batch (s) | process wall (s) | MERGE scan (ms) "
        "| rewrite (ms) | files rewritten | rows copied | peak memory (MiB) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case in results.large:
        for name, result in case.variants.items():
            merge = result.merge_medians()
            lines.append(
                f"| {case.skew} | {name} | {case.events_per_second(name):,.0f} "
                f"| {result.median_batch:.2f} | {result.wall:.1f} "
                f"| {_metric(merge, 'scanTimeMs')} | {_metric(merge, 'rewriteTimeMs')} "
                f"| {_metric(merge, 'numTargetFilesRemoved')} "
                f"| {_metric(merge, 'numTargetRowsCopied')} | {mib(result.peak_rss):.0f} |"
            )
    return [*lines, ""]


def freshness_table(results: BenchResults) -> list[str]:
    if not results.freshness:
        return []
    spec = results.size.freshness
    lines = [
        "## Goal 3: freshness",
        "",
        f"One file a second of {spec.events_per_second:,} order events for {spec.seconds} s, "
        "landed (renamed into the landing directory) while the stream runs: `runner stream` "
        "and the recipe on the runner's settings streaming too, one after the other, both on a "
        f"{FRESHNESS_TRIGGER} processing-time trigger reading every new file each batch, "
        f"OPTIMIZE every {results.size.optimize_every} batches; then `runner stream` once more "
        f"without OPTIMIZE ({NO_OPTIMIZE}). Visible: the modification time "
        "of the target's MERGE commit file (`_delta_log/N.json`) of the batch that read the "
        "file (the stream checkpoint's file-source log and offsets name it). Checked: each "
        "target holds the rows expected from the files in the batches the stream made.",
        "",
        "| variant | p50 (s) | p95 (s) | max (s) | files | batches | process wall (s) "
        "| peak memory (MiB) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results.freshness.values():
        lines.append(
            f"| {r.name} | {r.p50:.2f} | {r.p95:.2f} | {max(r.seconds):.2f} | {r.files} "
            f"| {r.batches} | {r.wall:.1f} | {mib(r.peak_rss):.0f} |"
        )
    return [*lines, ""]


def small_files_table(results: BenchResults) -> list[str]:
    if not results.small_files:
        return []
    spec = results.size.small_files
    copy = results.small_files[OPTIMIZED_COPY]
    lines = [
        "## Goal 4: small files",
        "",
        f"{spec.orders.files} batches of about {spec.orders.events_per_file:,} order events "
        "(one file a batch) through `runner run`, once per way of keeping files few: "
        + "; ".join(
            f"**{m.name}**: {m.description}" for m in MAINTENANCE if m.name in results.small_files
        )
        + (
            f" (N = {spec.optimize_every})"
            if any(m.optimize_every for m in MAINTENANCE if m.name in results.small_files)
            else ""
        )
        + ". Then, in one process, each target's file count and "
        "the median time of a full-scan query (every column aggregated; "
        f"{SCAN_REPEATS} runs after one to warm up, the tables in turn) against a copy of the "
        "target without maintenance, OPTIMIZEd. Checked: every target holds the expected rows.",
        "",
        "| maintenance | files | full scan (s) | × OPTIMIZEd copy | median batch (s) "
        "| process wall (s) | peak memory (MiB) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in results.small_files.items():
        run, ratio = r.run, r.scan_seconds / copy.scan_seconds
        lines.append(
            f"| {name} | {r.files} | {r.scan_seconds:.3f} | {ratio:.2f} "
            + (
                f"| {run.median_batch:.2f} | {run.wall:.1f} | {mib(run.peak_rss):.0f} |"
                if run
                else "| - | - | - |"
            )
        )
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
        "the rest of the batch, and the time between batches (each row says when it was "
        "handed to the file it waits in; rows appended in their batch are dated by the event "
        "log's own Delta commits). Medians of parts need not add up to the whole.",
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
            "| ... of which the event-log write (its row to its file, or to its own Delta "
            "commit) "
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
        "bash bench/upsert.sh --size full    # issue #33's sizes; on a quiet machine",
        "bash bench/upsert.sh --size small   # every part at small sizes: a check of the harness",
        "```",
        "",
        "It installs what it needs (scripts/bootstrap.sh, then the `bench` extra: matplotlib), "
        "generates the input (seeded: the same files every run), runs each step as its own "
        "process (its own JVM, built from the same project.yml target as the runner's), checks "
        "the targets, and writes this file and its plot (`upsert.md` / `upsert.png` for full, "
        f"`upsert-{results.size.name}.*` for another size). Each step's output, the generated "
        f"projects and the input stay in `target/bench/upsert-{results.size.name}/`. "
        "`--no-curve` skips the target-size curve; `--goals 2,4` runs only those goals' parts "
        "(and writes `upsert-<size>-goals-24.*`).",
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
        limit = "" if goal.limit is None else f" (goal {goal.limit_text})"
        yield f"{goal.text}: {goal.shown}{limit} {goal.verdict}"
