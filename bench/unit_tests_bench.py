"""Benchmark the example project's model unit tests: `runner test --select test_type:unit`.

    .venv/bin/python bench/unit_tests_bench.py [--repeat 3]

Runs the command as a subprocess on a copy of the example project (wall time includes Python
start-up, the JVM and SparkSession start, and every unit test through run_batch), records the
load average before and after each run, and writes bench/results/unit_tests.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runner_devtools.example_project import copy_example  # noqa: E402

RESULTS = REPO / "bench" / "results" / "unit_tests.md"
RUNNER = Path(sys.executable).with_name("runner")
COMMAND = ["test", "--select", "test_type:unit"]
BUDGET_SECONDS = 60.0


def timed_run(project: Path) -> tuple[float, str, str, str]:
    """(seconds, load before, load after, the summary line) of one CLI run."""
    before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    started = time.monotonic()
    done = subprocess.run(
        [str(RUNNER), *COMMAND, "-p", str(project)], capture_output=True, text=True, check=False
    )
    seconds = time.monotonic() - started
    after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if done.returncode != 0:
        sys.exit(f"runner test failed:\n{done.stdout}\n{done.stderr}")
    summary = [line for line in done.stdout.splitlines() if " passed, " in line][-1]
    return seconds, before, after, summary


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        project = copy_example(Path(tmp) / "example")
        for _ in range(args.repeat):
            runs.append(timed_run(project))
            print(f"{runs[-1][0]:.1f}s  load {runs[-1][1]} -> {runs[-1][2]}  {runs[-1][3]}")
    times = [r[0] for r in runs]
    lines = [
        "# `runner test --select test_type:unit` on the example project",
        "",
        f"- Date: {dt.datetime.now().strftime('%Y-%m-%d %H:%M')}",
        f"- Machine: {os.cpu_count()} CPUs, {platform.platform()}, Python "
        f"{platform.python_version()}",
        f"- Command: `.venv/bin/python bench/unit_tests_bench.py --repeat {args.repeat}`, which "
        f"runs `runner {' '.join(COMMAND)} -p <copy of the example>` as a subprocess",
        "- Wall time includes Python start-up, the JVM and SparkSession start and every unit test "
        "(scratch target, given rows, each batch through run_batch, comparison).",
        "",
        "| Run | Wall time | Load average before | Load average after | Result |",
        "| --- | --- | --- | --- | --- |",
    ]
    for index, (seconds, before, after, summary) in enumerate(runs, 1):
        lines.append(f"| {index} | {seconds:.1f} s | {before} | {after} | {summary} |")
    lines += [
        "",
        f"Median {statistics.median(times):.1f} s, min {min(times):.1f} s, max {max(times):.1f} s "
        f"(budget {BUDGET_SECONDS:.0f} s: {'met' if max(times) < BUDGET_SECONDS else 'NOT met'} "
        "by every run).",
    ]
    RESULTS.write_text("\n".join(lines) + "\n")
    print(f"wrote {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
