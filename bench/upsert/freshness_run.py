"""Goal 3, freshness: `runner stream` and the recipe on the runner's settings streaming too (the
same processing-time trigger, every new file each batch, OPTIMIZE every N batches in both), then
`runner stream` once more without OPTIMIZE, one after the other, each while files land one a
second (bench/upsert/freshness.py says how a file's landing and its rows' visibility are
observed).

Each stream starts first; files land once its query has written its checkpoint's metadata;
after the last file, the bench waits until every landed file's rows are visible, then stops the
stream with SIGTERM (both stop after the batch in flight). The check applies the files in the
batches each stream actually made (from its checkpoint) to the expected rows.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from bench.upsert.events import (
    OrderEvent,
    OrdersSpec,
    expected_rows,
    generate_orders,
    write_expected,
)
from bench.upsert.freshness import Lander, Latencies, PlannedBatches, latencies
from bench.upsert.plan import FRESHNESS_TRIGGER, FRESHNESS_VARIANTS, NO_OPTIMIZE, BenchSize
from bench.upsert.processes import StepRun, Steps, say
from bench.upsert.projects import (
    ORDERS_MODEL,
    ORDERS_TABLE,
    orders_project,
    runner_command,
    table_location,
)
from bench.upsert.results import FreshnessResult

STARTUP_SECONDS = 600  # generous: the machine is shared
DRAIN_SECONDS = 600  # after the last file, for every landed file to be visible


@dataclass(frozen=True)
class FreshnessRun:
    variant: str
    step: StepRun
    project: Path
    expected: Path
    latencies: Latencies  # every landed file's
    timed: frozenset[str]  # the files landed at the steady rate (not the warm-up file)

    @property
    def seconds(self) -> tuple[float, ...]:
        return tuple(s for name, s in self.latencies.seconds.items() if name in self.timed)

    @property
    def label(self) -> str:
        return f"freshness-{self.variant}"


def run_freshness(steps: Steps, size: BenchSize) -> list[FreshnessRun]:
    spec = size.freshness
    orders = generate_orders(
        OrdersSpec(files=spec.seconds, events_per_file=spec.events_per_second, keys=spec.keys)
    )
    runs = []
    for variant in FRESHNESS_VARIANTS:
        work = steps.work / "freshness" / variant
        landing = work / "landing"
        landing.mkdir(parents=True)  # the stream's source: it must exist when the query starts
        optimize_every = None if variant == NO_OPTIMIZE else size.optimize_every
        project = orders_project(
            work / "project", landing, optimize_every, trigger=FRESHNESS_TRIGGER
        )
        if variant in ("runner", NO_OPTIMIZE):
            command = runner_command(project, ORDERS_MODEL, "stream")
            checkpoint = project / "checkpoints" / ORDERS_MODEL
        else:
            command = [
                *(sys.executable, "-m", "bench.upsert.recipe"),
                *("--project", str(project), "--landing", str(landing)),
                *("--result", str(project / "result.json")),
                *("--optimize-every", str(size.optimize_every), "--stream", FRESHNESS_TRIGGER),
            ]
            checkpoint = project / "checkpoint"
        table = table_location(project, ORDERS_TABLE)
        step, found, timed = stream_while_landing(
            steps, f"freshness-{variant}", command, checkpoint, table, orders.files, landing
        )
        batches = [
            [event for name in names for event in orders.files[int(name.split(".")[0])]]
            for names in found.batches.values()
        ]
        expected = work / "expected.jsonl"
        write_expected(expected_rows(batches), expected)
        runs.append(FreshnessRun(variant, step, project, expected, found, timed))
    return runs


def stream_while_landing(
    steps: Steps,
    label: str,
    command: list[str],
    checkpoint: Path,
    table: Path,
    files: list[list[OrderEvent]],
    landing: Path,
) -> tuple[StepRun, Latencies, frozenset[str]]:
    """Run the stream; once its query started, land the first file and wait for its batch
    to end (the JVM's and the query's warm-up, left out of the figures), then the others one
    a second; wait until every file's rows are visible, then stop the stream."""
    children: list[subprocess.Popen[str]] = []
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["step"] = steps.run(label, command, on_start=children.append)
        except BaseException as error:  # re-raised in the bench's thread below
            outcome["error"] = error

    planned = PlannedBatches(checkpoint)  # read at every poll: Spark deletes old offsets

    def all_visible(lander: Lander) -> bool:
        found = latencies(lander.landed, checkpoint, table, planned)
        return not found.missing or "error" in outcome

    def warmed_up(lander: Lander) -> bool:
        """The warm-up file's batch is done, not only its MERGE: after the MERGE come the
        event-log write and the checkpoint's commit, and files landing meanwhile would all
        go to the next batch."""
        return (all_visible(lander) and (checkpoint / "commits" / "0").exists()) or (
            "error" in outcome
        )

    warm_up = Lander(files[:1], landing, interval=1.0)
    timed = Lander(files[1:], landing, interval=1.0, first_number=1)
    thread = threading.Thread(target=run, name=label)
    thread.start()
    try:
        wait_for(
            lambda: (checkpoint / "metadata").exists() or "error" in outcome,
            STARTUP_SECONDS,
            f"{label}'s query to start",
        )
        for lander, done, seconds in (
            (warm_up, warmed_up, STARTUP_SECONDS),
            (timed, all_visible, DRAIN_SECONDS),
        ):
            if "error" in outcome:
                break
            say(f"==> {label}: landing {len(lander.files)} file(s), one a second")
            lander.start()
            while lander.landing_files:
                planned()  # every batch's time, before Spark deletes its offsets file
                lander.join(timeout=1.0)
            wait_for(partial(done, lander), seconds, f"the landed files' rows in {table}")
    finally:
        if children and children[0].poll() is None:
            children[0].send_signal(signal.SIGTERM)  # stops after the batch in flight
        thread.join()
    if "error" in outcome:
        raise outcome["error"]
    found = latencies(warm_up.landed | timed.landed, checkpoint, table, planned)
    return outcome["step"], found, frozenset(timed.landed)


def wait_for(done: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit(f"error: gave up after {seconds:.0f}s waiting for {what}")
        time.sleep(1.0)


def readback_request(runs: list[FreshnessRun]) -> dict[str, Any]:
    return {
        "checks": {
            run.label: {
                "expected": str(run.expected),
                "tables": {run.variant: str(table_location(run.project, ORDERS_TABLE))},
            }
            for run in runs
        }
    }


def freshness_results(runs: list[FreshnessRun]) -> dict[str, FreshnessResult]:
    return {
        run.variant: FreshnessResult(
            run.variant,
            run.step.wall,
            run.step.peak_rss,
            run.seconds,
            len(run.timed),
            sum(any(n in run.timed for n in names) for names in run.latencies.batches.values()),
        )
        for run in runs
    }
