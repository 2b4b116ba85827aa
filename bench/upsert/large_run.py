"""Goal 2, large batches: the same large batches into a pre-built target, through the runner,
the recipe on the runner's settings and a plain append, once per key draw (plan.SKEWS).

The targets are pre-built in one process (bench.upsert.curve_targets), their files holding key
ranges, as a table filled over time by orders placed in order. No maintenance runs: the goal
is the upsert's own throughput. The check reads only the rows of the keys the batches touch
(the newest event of each) and counts the rest: writing out the millions of untouched rows of
a full-size target as expected text would cost more than the run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.upsert.events import curve_batches, expected_rows, land_files, write_expected
from bench.upsert.plan import LARGE_VARIANTS, SKEWS, BenchSize, curve_files
from bench.upsert.processes import StepRun, Steps
from bench.upsert.projects import (
    ORDERS_MODEL,
    ORDERS_TABLE,
    orders_project,
    runner_command,
    table_location,
)
from bench.upsert.results import LargeCase, VariantResult, handwritten_result, runner_result

APPENDED = "bench.orders_appended"


@dataclass(frozen=True)
class LargeRun:
    skew: str
    events: int
    expected: Path  # the touched keys' rows
    expected_rows: int  # the pre-built rows plus the orders inserted
    steps: dict[str, tuple[StepRun, Path]]  # variant -> its step and project

    def label(self, variant: str) -> str:
        return f"large-{self.skew}-{variant}"


def run_large(steps: Steps, size: BenchSize) -> list[LargeRun]:
    spec, work = size.large, steps.work
    planned = []
    targets: list[dict[str, Any]] = []
    for skew in SKEWS:
        batches = curve_batches(spec.target_rows, spec.batches, spec.events, skew=skew)
        landing = work / "landing" / f"large-{skew}"
        land_files(batches, landing)
        expected = work / f"expected-large-{skew}.jsonl"
        write_expected(expected_rows(batches), expected)
        inserted = {
            e.order_id for b in batches for e in b if int(e.order_id[1:]) >= spec.target_rows
        }
        projects = {
            v: orders_project(work / "large" / skew / v, landing, None) for v in LARGE_VARIANTS
        }
        targets += [
            {
                "project": str(projects[v]),
                "rows": spec.target_rows,
                "files": curve_files(spec.target_rows),
                "cluster_by": [],
                "table": ORDERS_TABLE,
                "ordered": True,
            }
            for v in LARGE_VARIANTS
            if v != "append"
        ]
        planned.append(
            (
                skew,
                sum(map(len, batches)),
                expected,
                spec.target_rows + len(inserted),
                landing,
                projects,
            )
        )
    request = work / "large_targets.json"
    request.write_text(json.dumps(targets, indent=1))
    steps.module("large-targets", "bench.upsert.curve_targets", request)
    runs = []
    for skew, events, expected, rows, landing, projects in planned:
        ran = {}
        for variant, project in projects.items():
            label = f"large-{skew}-{variant}"
            if variant == "runner":
                step = steps.run(label, runner_command(project, ORDERS_MODEL, pre_built=True))
            else:
                module = (
                    "bench.upsert.recipe" if variant == "recipe-tuned" else "bench.upsert.append"
                )
                step = steps.module(
                    label,
                    module,
                    *(
                        "--project",
                        project,
                        "--landing",
                        landing,
                        "--result",
                        project / "result.json",
                    ),
                )
            ran[variant] = (step, project)
        runs.append(LargeRun(skew, events, expected, rows, ran))
    return runs


def readback_request(runs: list[LargeRun]) -> dict[str, Any]:
    request: dict[str, Any] = {"checks": {}, "counts": {}, "event_logs": {}, "histories": {}}
    for run in runs:
        upserted = {
            v: table_location(p, ORDERS_TABLE) for v, (_, p) in run.steps.items() if v != "append"
        }
        request["checks"][f"large-{run.skew}"] = {
            "expected": str(run.expected),
            "tables": {v: str(t) for v, t in upserted.items()},
            "keys_only": True,
        }
        request["counts"] |= {run.label(v): str(t) for v, t in upserted.items()}
        request["counts"][run.label("append")] = str(
            table_location(run.steps["append"][1], APPENDED)
        )
        request["event_logs"][run.label("runner")] = [str(run.steps["runner"][1]), ORDERS_MODEL]
        request["histories"] |= {run.label(v): str(t) for v, t in upserted.items()}
    return request


def expected_counts(runs: list[LargeRun]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for run in runs:
        counts |= {run.label(v): run.expected_rows for v in run.steps if v != "append"}
        counts[run.label("append")] = run.events
    return counts


def large_cases(runs: list[LargeRun], size: BenchSize, answer: dict[str, Any]) -> list[LargeCase]:
    cases = []
    for run in runs:
        variants: dict[str, VariantResult] = {}
        for variant, (step, project) in run.steps.items():
            label = run.label(variant)
            history = answer["histories"].get(label, [])
            if variant == "runner":
                variants[variant] = runner_result(label, step, answer["event_logs"][label], history)
            else:
                variants[variant] = handwritten_result(label, step, project, history)
        cases.append(
            LargeCase(run.skew, size.large.target_rows, size.large.events, run.events, variants)
        )
    return cases
