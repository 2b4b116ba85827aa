"""bench/merge_floor_bench.py's split of a MERGE's wall into Delta's steps, from descriptions as
Delta names its SQL executions, and its report, from made-up samples. No JVM."""

from __future__ import annotations

import argparse

import pytest

from bench.merge_floor_bench import VARIANTS, WARM_UP, Samples, report, step_seconds

SCAN = "Delta: MERGE operation - scanning files for matches"


def test_the_snapshot_state_computed_while_scanning_counts_as_its_own_step() -> None:
    steps = step_seconds(
        [
            (f"{SCAN}: Compute snapshot for version: 7", 0.2),
            (f"{SCAN}: Compute snapshot for version: 7", 0.1),
            ("MERGE operation - materialize source", 0.05),
            (SCAN, 0.25),
            ("Delta: Writing modified data - MERGE operation - Rewriting 1 files", 0.3),
            ("$anonfun$recordDeltaOperationInternal$1 at DatabricksLogging.scala:128", 0.08),
        ]
    )
    # the last one names no step: it counts toward the rest
    assert steps == pytest.approx(
        {"snapshot state": 0.3, "source": 0.05, "touched files": 0.25, "rewrite": 0.3}
    )


def test_the_report_leaves_out_the_warm_up_and_states_goal_1s_budget() -> None:
    samples = {}
    for variant in VARIANTS:
        s = Samples()
        for batch in range(WARM_UP + 3):
            warm = batch >= WARM_UP
            s.add("merge", 1.0 if warm else 9.0)
            s.add("append", 0.25 if warm else 5.0)
            for name in ("snapshot state", "source", "touched files", "rewrite", "rest"):
                s.add(name, 0.2)
            for name in ("executionTimeMs", "materializeSourceTimeMs", "scanTimeMs"):
                s.add(name, 0.5)
            s.add("rewriteTimeMs", 0.5)
        samples[variant] = s
    text = report(samples, argparse.Namespace(size=20_000, batches=WARM_UP + 3), "0.1", "0.2")
    assert "| runner's settings | 1.00 | 0.20 | 0.20 | 0.20 | 0.20 | 0.20 |" in text
    assert "| 0.25 | 4.0 |" in text  # append wall, MERGE / append
    assert "twice an append batch: 0.50 s here" in text
    assert all(f"| {variant} |" in text for variant in VARIANTS)
