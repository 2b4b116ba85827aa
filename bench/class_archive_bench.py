"""Benchmark the tests' JVM class archive (runner_devtools/jvm_archive.py): `runner run` of
the example from scratch, in a JVM of its own with the flags the test suite gives its short-lived
JVMs, with and without the archive, taking turns.

    .venv/bin/python bench/class_archive_bench.py [--runs 3]

CPU: the user and system seconds of the command's whole process tree (Python and its JVM),
sampled until it exits; a loaded machine inflates the wall time, hardly the CPU. Writes
bench/results/class_archive.md; makes the archive first if it is missing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.upsert.processes import process_cpu_seconds, process_tree  # noqa: E402
from runner_devtools import jvm_archive  # noqa: E402
from runner_devtools.example_project import copy_example  # noqa: E402

RESULTS = REPO / "bench" / "results" / "class_archive.md"
RUNNER = Path(sys.executable).with_name("runner")
JIT = jvm_archive.SHORT_LIVED_JVM_OPTIONS  # the flags tests/conftest.py gives runner JVMs


def tree_cpu_seconds(process: subprocess.Popen[bytes]) -> float:
    """CPU seconds of ``process`` and every descendant seen while it ran (sampled: a JVM
    outlives none of the samples by more than a fraction of a second)."""
    last: dict[int, float] = {}
    while process.poll() is None:
        for pid in process_tree(process.pid):
            try:
                last[pid] = process_cpu_seconds(pid)
            except OSError:
                continue  # it ended while we looked: its last sample stands
        time.sleep(0.2)
    return sum(last.values())


def run_example(project: Path, archive: bool) -> tuple[float, float]:
    """Wall and CPU seconds of `runner run --select orders_merge+` on a fresh target."""
    shutil.rmtree(project / "target" / "local", ignore_errors=True)
    options = f"{JIT} {jvm_archive.jvm_options()}" if archive else JIT
    env = {**os.environ, "RUNNER_NO_SERVER": "1", "RUNNER_JVM_OPTIONS": options}
    command = [str(RUNNER), "run", "--select", "orders_merge+", "-p", str(project)]
    started = time.monotonic()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    cpu = tree_cpu_seconds(process)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {process.returncode}")
    return time.monotonic() - started, cpu


def write(runs: dict[bool, list[tuple[float, float]]], loads: list[float], path: Path) -> None:
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# The tests' JVM class archive: `runner run` of the example with and without it",
        "",
        f"`.venv/bin/python bench/class_archive_bench.py {' '.join(sys.argv[1:])}`, {now}, "
        f"{os.cpu_count()} CPUs, load average during the runs {min(loads):.1f}-"
        f"{max(loads):.1f}. `runner run --select orders_merge+` of the example (its four sample "
        f"files, both models) from an empty target, in a JVM of its own with `{JIT}` (the test "
        f"suite's short-lived JVMs); the two took turns. Archive: `{path}`.",
        "",
        "| JVM | median wall (s) | median CPU (s) | runs (wall/CPU) |",
        "|---|---|---|---|",
    ]
    for archive, label in ((False, "loads its classes"), (True, "maps them from the archive")):
        got = runs[archive]
        walls, cpus = [w for w, _ in got], [c for _, c in got]
        every = ", ".join(f"{w:.1f}/{c:.1f}" for w, c in got)
        lines.append(
            f"| {label} | {statistics.median(walls):.1f} | {statistics.median(cpus):.1f} "
            f"| {every} |"
        )
    RESULTS.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    path = jvm_archive.make(JIT)
    runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    loads = []
    with tempfile.TemporaryDirectory(prefix="class-archive-bench-") as scratch:
        project = copy_example(Path(scratch) / "example")
        stage = [sys.executable, str(REPO / "scripts" / "stage_sample_data.py")]
        orders = project / "sample_data" / "orders"
        subprocess.run([*stage, str(orders), str(project / "target/landing/orders")], check=True)
        for _ in range(options.runs):
            for archive in (False, True):
                measured = run_example(project, archive)
                runs[archive].append(measured)
                loads.append(os.getloadavg()[0])
                where = "archive" if archive else "no archive"
                print(f"{where}: {measured[0]:.1f} s, CPU {measured[1]:.1f} s", flush=True)
                if all(runs.values()):  # a bench stopped early keeps what it measured
                    write(runs, loads, path)
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
