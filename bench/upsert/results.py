"""The bench's results as data: per variant and per curve point, their batches, and the goals
of issue #33 computed from them (each side by side in one run; a goal this bench does not
measure yet says so). Pure: built from what the steps and the readback wrote."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.upsert.events import InputSummary
from bench.upsert.freshness import percentile
from bench.upsert.plan import (
    LAYOUTS,
    MAINTENANCE,
    NO_OPTIMIZE,
    OPTIMIZED_COPY,
    RECOMMENDED_LAYOUT,
    RUNNER_DEFAULT_MAINTENANCE,
    BenchSize,
)
from bench.upsert.processes import StepRun

# Delta's MERGE operation metrics worth a median (DESCRIBE HISTORY operationMetrics)
MERGE_METRICS = (
    "executionTimeMs",
    "materializeSourceTimeMs",
    "scanTimeMs",
    "rewriteTimeMs",
    "numTargetFilesRemoved",
    "numTargetFilesAdded",
    "numTargetRowsCopied",
)


@dataclass(frozen=True)
class Batch:
    batch_id: int
    started: float  # epoch seconds
    seconds: float
    statements: tuple[tuple[str, float], ...] = ()  # the runner's: (keyword, seconds)
    phases: Mapping[str, float] = field(default_factory=dict)  # per-phase timings, when logged
    # the runner's, epoch seconds: when its event-log row was handed to the file it waits in
    # (a stream's since 2026-11-29); None for a row appended in its batch
    logged: float | None = None


@dataclass(frozen=True)
class VariantResult:
    name: str
    started: float  # epoch seconds when its process started
    wall: float
    peak_rss: int
    batches: tuple[Batch, ...]
    merges: tuple[Mapping[str, str], ...] = ()  # operation metrics of each MERGE commit
    progress: tuple[Mapping[str, Any], ...] = ()  # Spark's durationMs per batch (hand-written)
    event_log_commits: tuple[float, ...] = ()  # the runner's: when each batch's row committed

    @property
    def median_batch(self) -> float:
        return statistics.median(b.seconds for b in self.batches)

    @property
    def startup(self) -> float:
        """From starting the process to the first batch: Python, the JVM, the set-up."""
        return min(b.started for b in self.batches) - self.started

    def between_batches(self) -> dict[str, float] | None:
        """The runner's time after a batch's statements, median over batches: the event-log
        write (until the row was handed to its file, or its own Delta commit), then the rest
        until the next batch starts (the checkpoint's commit, the next trigger's file listing
        and planning). None without that moment for every batch."""
        logged = [b.logged for b in self.batches]
        if all(moment is not None for moment in logged):
            durable = [float(moment) for moment in logged if moment is not None]
        elif len(self.event_log_commits) == len(self.batches):  # one append per batch
            durable = list(self.event_log_commits)
        else:
            return None
        if len(self.batches) < 2:
            return None
        gaps, writes, rests = [], [], []
        pairs = list(zip(self.batches, durable, strict=True))
        for (batch, committed), (following, _) in zip(pairs, pairs[1:], strict=False):
            ended = batch.started + batch.seconds
            gaps.append(following.started - ended)
            # a row handed to its file within the millisecond its rounded seconds end in: 0
            writes.append(max(0.0, committed - ended))
            rests.append(following.started - committed)
        return {
            "gap": statistics.median(gaps),
            "event_log_write": statistics.median(writes),
            "rest": statistics.median(rests),
        }

    @property
    def median_cycle(self) -> float | None:
        """Median time from one batch's start to the next one's: the batch plus whatever
        happens between batches (event-log write, checkpoint commit, next file listing)."""
        starts = sorted(b.started for b in self.batches)
        gaps = [later - earlier for earlier, later in zip(starts, starts[1:], strict=False)]
        return statistics.median(gaps) if gaps else None

    def merge_medians(self) -> dict[str, float]:
        return medians_of(self.merges, MERGE_METRICS)


@dataclass(frozen=True)
class CurvePoint:
    rows: int
    layout: str
    result: VariantResult


def throughput(batches: Sequence[Batch], events: int) -> float:
    """Events per second from the first batch's start to the last one's end (the process's
    start and stop left out: they do not grow with the input)."""
    began = min(b.started for b in batches)
    ended = max(b.started + b.seconds for b in batches)
    return events / (ended - began)


@dataclass(frozen=True)
class LargeCase:
    """Goal 2, one key draw: the same large batches through each variant."""

    skew: str
    target_rows: int
    batch_events: int
    events: int
    variants: dict[str, VariantResult]

    def events_per_second(self, name: str) -> float:
        return throughput(self.variants[name].batches, self.events)


@dataclass(frozen=True)
class FreshnessResult:
    """Goal 3, one variant: seconds from each file's landing to its rows' visibility."""

    name: str
    wall: float
    peak_rss: int
    seconds: tuple[float, ...]
    files: int  # landed
    batches: int  # that read a landed file

    @property
    def p50(self) -> float:
        return percentile(self.seconds, 0.5)

    @property
    def p95(self) -> float:
        return percentile(self.seconds, 0.95)


@dataclass(frozen=True)
class SmallFilesResult:
    """Goal 4, one maintenance variant (or the OPTIMIZEd copy, without a run)."""

    name: str
    files: int
    scan_seconds: float
    run: VariantResult | None = None


@dataclass(frozen=True)
class Goal:
    text: str
    measured: float | None
    limit: float | None  # None: reported, no limit
    digits: int = 2
    at_least: bool = False  # the limit is a floor, not a ceiling

    @property
    def shown(self) -> str:
        return "-" if self.measured is None else f"{self.measured:,.{self.digits}f}"

    @property
    def limit_text(self) -> str:
        if self.limit is None:
            return "-"
        return f"{'≥' if self.at_least else '≤'} {self.limit:g}"

    @property
    def verdict(self) -> str:
        if self.measured is None:
            return "not measured"
        if self.limit is None:
            return "reported"
        kept = self.measured >= self.limit if self.at_least else self.measured <= self.limit
        return "met" if kept else "not met"


@dataclass
class BenchResults:
    size: BenchSize
    command: str
    started_at: datetime
    load_start: str
    load_end: str
    wall: float
    inputs: InputSummary | None  # goal 1's input; None when its variants did not run
    variants: dict[str, VariantResult]
    curve: list[CurvePoint]
    commit: str
    jvm_options: str = ""
    large: list[LargeCase] = field(default_factory=list)
    freshness: dict[str, FreshnessResult] = field(default_factory=dict)
    small_files: dict[str, SmallFilesResult] = field(default_factory=dict)  # + optimized-copy

    def curve_ratio(self, layout: str) -> float | None:
        points = sorted((p for p in self.curve if p.layout == layout), key=lambda p: p.rows)
        if len(points) < 2:
            return None
        return points[-1].result.median_batch / points[0].result.median_batch

    def goals(self) -> list[Goal]:
        """Issue #33's goals, numbered as it numbers them; a goal whose runs this bench did
        not make (``--goals``) says "not measured"."""
        return [
            *self.small_batch_goals(),
            *self.large_batch_goals(),
            *self.freshness_goals(),
            *self.small_files_goals(),
            *self.still_goals(),
        ]

    def small_batch_goals(self) -> list[Goal]:
        text = "1. {}, runner / recipe-tuned (small batches)"
        if not self.variants:
            return [Goal(text.format("median start to next start"), None, 0.9)]
        runner, tuned = self.variants["runner"], self.variants["recipe-tuned"]
        cycle = (
            runner.median_cycle / tuned.median_cycle
            if runner.median_cycle is not None and tuned.median_cycle
            else None
        )
        return [
            Goal(text.format("median start to next start"), cycle, 0.9),
            Goal(text.format("process wall"), runner.wall / tuned.wall, 0.9),
        ]

    def large_batch_goals(self) -> list[Goal]:
        large = self.size.large
        if not self.large:
            return [
                Goal(
                    f"2. events/s, runner / recipe-tuned ({large.events:,}-event batches, "
                    f"{large.target_rows:,}-row target)",
                    None,
                    1.1,
                    at_least=True,
                )
            ]
        goals = []
        for case in self.large:
            about = f"{case.batch_events:,}-event batches, {case.target_rows:,}-row target"
            goals.append(
                Goal(
                    f"2. events/s, runner / recipe-tuned ({about}, {case.skew} keys)",
                    case.events_per_second("runner") / case.events_per_second("recipe-tuned"),
                    1.1,
                    at_least=True,
                )
            )
            goals += [
                Goal(
                    f"2. events/s, {name} ({case.skew} keys)", case.events_per_second(name), None, 0
                )
                for name in case.variants
            ]
        return goals

    def freshness_goals(self) -> list[Goal]:
        text = "3. p95 file landed to rows visible, runner / recipe-tuned"
        pushed = (
            f"3. p95, runner with OPTIMIZE every {self.size.optimize_every} / runner without "
            "(maintenance must not push p95 up)"
        )
        runner, tuned = self.freshness.get("runner"), self.freshness.get("recipe-tuned")
        bare = self.freshness.get(NO_OPTIMIZE)
        if runner is None or tuned is None:
            return [Goal(text, None, 1.0), Goal(pushed, None, 1.0)]
        return [
            Goal(text, runner.p95 / tuned.p95, 1.0),
            Goal(pushed, runner.p95 / bare.p95 if bare else None, 1.0),
            *(
                Goal(f"3. {p} file landed to rows visible, {r.name} (s)", value, None)
                for r in self.freshness.values()
                for p, value in (("p50", r.p50), ("p95", r.p95))
            ),
        ]

    def small_files_goals(self) -> list[Goal]:
        batches = self.size.small_files.orders.files
        text = (
            f"4. full-scan query after {batches} small batches / freshly OPTIMIZEd copy, "
            "{} maintenance"
        )
        copy = self.small_files.get(OPTIMIZED_COPY)
        if copy is None:
            return [Goal(text.format("the runner's default"), None, 1.2)]
        return [
            Goal(
                text.format(
                    f"{m.name}"
                    + (" (the runner's default)" if m.name == RUNNER_DEFAULT_MAINTENANCE else "")
                ),
                self.small_files[m.name].scan_seconds / copy.scan_seconds,
                1.2 if m.name == RUNNER_DEFAULT_MAINTENANCE else None,
            )
            for m in MAINTENANCE
            if m.name in self.small_files
        ]

    def still_goals(self) -> list[Goal]:
        largest, smallest = (
            (max(self.size.curve_targets), min(self.size.curve_targets))
            if self.size.curve_targets
            else (0, 0)
        )
        recipe, runner = self.variants.get("recipe"), self.variants.get("runner")
        return [
            Goal(
                "5. process wall, runner / recipe as the seeds write it",
                runner.wall / recipe.wall if runner and recipe else None,
                0.5,
            ),
            *(
                Goal(
                    f"5. peak memory of the process tree, {name} (MiB)",
                    mib(v.peak_rss),
                    None,
                    digits=0,
                )
                for name, v in self.variants.items()
            ),
            *(
                Goal(
                    f"5. median batch, {largest:,}-row / {smallest:,}-row target, layout "
                    f"{layout.name}{' (recommended)' if layout.name == RECOMMENDED_LAYOUT else ''}",
                    self.curve_ratio(layout.name),
                    None,
                )
                for layout in LAYOUTS
            ),
        ]


def mib(size: int) -> float:
    return size / (1 << 20)


def medians_of(rows: Iterable[Mapping[str, Any]], keys: Sequence[str]) -> dict[str, float]:
    """Median of each key over the rows that have it (as numbers)."""
    values: dict[str, list[float]] = {}
    for row in rows:
        for key in keys:
            if row.get(key) not in (None, ""):
                values.setdefault(key, []).append(float(row[key]))
    return {key: statistics.median(found) for key, found in values.items()}


# -- built from the steps' outputs ----------------------------------------------------------


def runner_batches(event_log: Sequence[Mapping[str, Any]]) -> tuple[Batch, ...]:
    """Batches of one model from its event-log rows (as ``runner history --format json``)."""
    return tuple(
        Batch(
            batch_id=int(row["batch_id"]),
            started=_epoch(row["started_at"]),
            seconds=float(row["seconds"]),
            statements=tuple((s["keyword"], float(s["seconds"])) for s in row["statements"]),
            phases=phase_timings(row),
            logged=_epoch(row["logged_at"]) if row.get("logged_at") else None,
        )
        for row in sorted(event_log, key=lambda r: r["batch_id"])
    )


def _epoch(naive_utc: str) -> float:
    """Epoch seconds of a timestamp of the event log (ISO text, UTC without a zone)."""
    return datetime.fromisoformat(naive_utc).replace(tzinfo=UTC).timestamp()


def phase_timings(row: Mapping[str, Any]) -> dict[str, float]:
    """Per-phase seconds of a batch from the event log's ``phases`` column (source, expectations,
    schema_drift, render; a list of structs with a phase and its seconds); empty for event logs
    written before the column existed."""
    return {
        str(item["phase"]): float(item["seconds"])
        for item in row.get("phases") or []
        if isinstance(item, Mapping) and item.get("seconds") is not None
    }


def handwritten_batches(result: Mapping[str, Any]) -> tuple[Batch, ...]:
    return tuple(
        Batch(int(b["batch_id"]), float(b["started"]), float(b["seconds"]))
        for b in sorted(result["batches"], key=lambda b: b["batch_id"])
    )


def merge_commits(history: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, str], ...]:
    return tuple(c["metrics"] for c in history if c["operation"] == "MERGE")


def write_times(history: Sequence[Mapping[str, Any]]) -> tuple[float, ...]:
    """When each append to a table (the event log: one per batch) was committed, in order."""
    return tuple(float(c["timestamp"]) for c in history if c["operation"] == "WRITE")


def runner_result(
    name: str, step: StepRun, event_log: Mapping[str, Any], history: Sequence[Mapping[str, Any]]
) -> VariantResult:
    """A `runner run` step's result: batches and timings from its event log (``rows`` and the
    log's own ``commits``, as the readback returns them), MERGE metrics from the target's
    history."""
    return VariantResult(
        name,
        step.started,
        step.wall,
        step.peak_rss,
        runner_batches(event_log["rows"]),
        merge_commits(history),
        event_log_commits=write_times(event_log["commits"]),
    )


def handwritten_result(
    name: str, step: StepRun, project: Path, history: Sequence[Mapping[str, Any]]
) -> VariantResult:
    """A hand-written variant's result: batches and Spark's progress from the result.json it
    wrote in its project, MERGE metrics from its target's history."""
    written = json.loads((project / "result.json").read_text())
    return VariantResult(
        name,
        step.started,
        step.wall,
        step.peak_rss,
        handwritten_batches(written),
        merge_commits(history),
        tuple(written["progress"]),
    )
