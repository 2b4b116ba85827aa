"""Goal 4, small files: the same small batches through `runner run` once per maintenance
variant (plan.MAINTENANCE), one file a batch; then, in the readback, each target's file count
and a full-scan query's time against a freshly OPTIMIZEd copy of the target without
maintenance (every target holds the same rows: the check compares each with the expected)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.upsert.events import expected_rows, generate_orders, land_files, write_expected
from bench.upsert.plan import (
    MAINTENANCE,
    MAINTENANCE_NAMES,
    OPTIMIZED_COPY,
    RUNNER_DEFAULT_MAINTENANCE,
    BenchSize,
)
from bench.upsert.processes import StepRun, Steps
from bench.upsert.projects import (
    ORDERS_MODEL,
    ORDERS_TABLE,
    orders_project,
    runner_command,
    table_location,
)
from bench.upsert.results import SmallFilesResult, runner_result


@dataclass(frozen=True)
class SmallFilesRun:
    expected: Path
    steps: dict[str, tuple[StepRun, Path]]  # maintenance -> its step and project
    copy: Path  # where the readback writes the OPTIMIZEd copy

    @staticmethod
    def label(maintenance: str) -> str:
        return f"small-files-{maintenance}"


def run_small_files(
    steps: Steps, size: BenchSize, names: tuple[str, ...] = MAINTENANCE_NAMES
) -> SmallFilesRun:
    """Land goal 4's batches once per maintenance variant in ``names`` (all by default; the
    runner's default among them, since the OPTIMIZEd copy is a copy of its target)."""
    spec, work = size.small_files, steps.work / "small-files"
    orders = generate_orders(spec.orders)
    landing = work / "landing"
    land_files(orders.files, landing)
    expected = work / "expected.jsonl"
    write_expected(expected_rows(orders.files), expected)
    ran = {}
    for maintenance in (m for m in MAINTENANCE if m.name in names):
        project = orders_project(
            work / maintenance.name,
            landing,
            spec.optimize_every if maintenance.optimize_every else None,
            table_properties=dict(maintenance.table_properties) or None,
        )
        step = steps.run(
            SmallFilesRun.label(maintenance.name), runner_command(project, ORDERS_MODEL)
        )
        ran[maintenance.name] = (step, project)
    return SmallFilesRun(expected, ran, work / OPTIMIZED_COPY)


def readback_request(run: SmallFilesRun) -> dict[str, Any]:
    tables = {name: str(table_location(p, ORDERS_TABLE)) for name, (_, p) in run.steps.items()}
    return {
        "checks": {"small-files": {"expected": str(run.expected), "tables": tables}},
        "event_logs": {
            run.label(name): [str(p), ORDERS_MODEL] for name, (_, p) in run.steps.items()
        },
        "scans": {
            "tables": tables,
            "copy_of": tables[RUNNER_DEFAULT_MAINTENANCE],
            "copy": str(run.copy),
        },
    }


def small_files_results(run: SmallFilesRun, answer: dict[str, Any]) -> dict[str, SmallFilesResult]:
    scans = answer["scans"]
    results = {
        name: SmallFilesResult(
            name,
            int(scans[name]["files"]),
            float(scans[name]["seconds"]),
            runner_result(run.label(name), step, answer["event_logs"][run.label(name)], []),
        )
        for name, (step, _) in run.steps.items()
    }
    copy = scans[OPTIMIZED_COPY]
    results[OPTIMIZED_COPY] = SmallFilesResult(
        OPTIMIZED_COPY, int(copy["files"]), float(copy["seconds"])
    )
    return results
