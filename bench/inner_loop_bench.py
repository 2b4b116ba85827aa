"""Benchmark the inner loop: `runner show` and `runner test` on the example, each command a
separate process as a user types it, through the local server (`runner server start`) and in
a JVM of its own (RUNNER_NO_SERVER=1). Beside them, the floor under the unit tests: the same
Delta work typed by hand (bench/unit_test_floor.py), so that what `runner test` costs can be
told from what Delta costs on the machine.

    .venv/bin/python bench/inner_loop_bench.py [--project DIR] [--runs 5]

``--project``: an example whose tables are built (after `bash scripts/example.sh`, the
repository itself). Without it the bench copies the example to a temporary directory and builds
its tables there first (`runner run --select orders_merge+`, `runner seed`, in-process).
Writes bench/results/inner_loop.md after every measurement (a stopped bench keeps what it
measured), and stops the server it started.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.upsert.processes import process_cpu_seconds  # noqa: E402
from runner.spark.session.local_server import LocalServer  # noqa: E402
from runner_devtools.example_project import copy_example  # noqa: E402

RESULTS = REPO / "bench" / "results" / "inner_loop.md"
RUNNER = Path(sys.executable).with_name("runner")
# the quick ones first: a bench stopped early has them
FLOOR = "the unit tests' Delta work by hand (bench/unit_test_floor.py)"
COMMANDS = {
    "runner show --model orders_merge": ["show", "--model", "orders_merge"],
    "runner test --select test_type:data": ["test", "--select", "test_type:data"],
    "runner test --select test_type:unit": ["test", "--select", "test_type:unit"],
    FLOOR: [],
    "runner test": ["test"],
}
GOAL_SECONDS = 5.0


def children_cpu_seconds() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def runner(project: Path, args: list[str], *, server: bool) -> tuple[float, float]:
    """Run `runner ARGS -p PROJECT`: its wall time, and the CPU it cost (the command's process
    and, through the server, the server's JVM), in seconds. CPU is what a loaded machine does
    not inflate: on an idle machine the wall time is at most about the CPU plus the round trips.
    Fails on a non-zero exit, or when it did not (or did) use the server."""
    env = {**os.environ, "COLUMNS": "160"}
    if not server:
        env["RUNNER_NO_SERVER"] = "1"
    server_pid = LocalServer(project).running_pid() if server else None
    cpu_before = children_cpu_seconds() + process_cpu_seconds(server_pid)
    started = time.monotonic()
    # no args: the floor under the unit tests, a process of its own like a command
    command = [str(RUNNER), *args] if args else [sys.executable, "-m", "bench.unit_test_floor"]
    result = subprocess.run(
        [*command, "-p", str(project)], capture_output=True, text=True, env=env, cwd=REPO
    )
    seconds = time.monotonic() - started
    cpu = children_cpu_seconds() + process_cpu_seconds(server_pid) - cpu_before
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")
    if ("using the local server" in result.stderr) != server:
        raise SystemExit(f"{' '.join(command)}: server={server}, but:\n{result.stderr}")
    return seconds, cpu


def example_copy(root: Path) -> Path:
    """The example in ``root``, its tables built in-process."""
    project = copy_example(root / "example")
    (project / "tests").mkdir()
    for singular in (REPO / "tests").glob("*.sql"):
        shutil.copy2(singular, project / "tests" / singular.name)
    stage = [sys.executable, str(REPO / "scripts" / "stage_sample_data.py")]
    subprocess.run(
        [*stage, str(project / "sample_data" / "orders"), str(project / "target/landing/orders")],
        check=True,
    )
    print("building the example's tables in-process...", flush=True)
    runner(project, ["run", "--select", "orders_merge+"], server=False)
    runner(project, ["seed"], server=False)
    return project


def shown(command: str) -> str:
    return f"`{command}`" if command.startswith("runner ") else command


def load_average() -> float:
    return os.getloadavg()[0]


class Results:
    """The measurements so far, written to RESULTS after each one."""

    def __init__(self, project: Path, runs: int) -> None:
        self.project, self.runs = project, runs
        self.start_seconds: float | None = None
        self.first: dict[str, float] = {}
        self.times: dict[tuple[str, bool], list[float]] = {}
        self.cpu: dict[tuple[str, bool], list[float]] = {}
        self.loads: list[float] = []

    def add(self, command: str, server: bool, measured: tuple[float, float]) -> None:
        seconds, cpu = measured
        self.times.setdefault((command, server), []).append(seconds)
        self.cpu.setdefault((command, server), []).append(cpu)
        self.loads.append(load_average())
        self.write()

    def write(self) -> None:
        now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        lines = [
            "# The inner loop: commands through the local server or in a JVM of their own",
            "",
            f"`.venv/bin/python bench/inner_loop_bench.py {' '.join(sys.argv[1:])}`, {now}, "
            f"{os.cpu_count()} CPUs, load average during the runs "
            f"{min(self.loads, default=0):.1f}-{max(self.loads, default=0):.1f}. The example "
            "with its four sample files run and its seed loaded; each command a separate "
            "process, as typed. Median of the runs; goal with the server: under "
            f"{GOAL_SECONDS:.0f} s.",
            "",
        ]
        if self.start_seconds is not None:
            lines.append(f"`runner server start`: {self.start_seconds:.1f} s.")
        for command, seconds in self.first.items():
            lines.append(
                f"First {shown(command)} after the start (the server's own warm-up: JIT, first "
                f"Delta reads): {seconds:.1f} s, not counted below."
            )
        lines += [
            "",
            "Wall: seconds as typed. CPU: what the command cost in CPU seconds, the command's "
            "own process and, through the server, the server's JVM; a loaded machine inflates "
            "the wall time, hardly the CPU.",
            "",
            "| command | with the server: wall (s) | with the server: CPU (s) "
            "| in-process JVM: wall (s) | in-process JVM: CPU (s) | runs (server / in-process) |",
            "|---|---|---|---|---|---|",
        ]
        for command in COMMANDS:
            cells = []
            for server in (True, False):
                for table in (self.times, self.cpu):
                    got = table.get((command, server), [])
                    cells.append(f"{statistics.median(got):.1f}" if got else "not measured")
            counts = "/".join(str(len(self.times.get((command, s), []))) for s in (True, False))
            lines.append(f"| {shown(command)} | {' | '.join(cells)} | {counts} |")
        lines += ["", "Every run (wall s / CPU s):", ""]
        for (command, server), got in self.times.items():
            where = "server" if server else "in-process"
            pairs = zip(got, self.cpu[(command, server)], strict=True)
            lines.append(
                f"- {shown(command)}, {where}: {', '.join(f'{w:.1f}/{c:.1f}' for w, c in pairs)}"
            )
        RESULTS.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, help="an example whose tables are built")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-in-process", action="store_true", help="measure the server only")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="inner-loop-") as scratch:
        project = (options.project or example_copy(Path(scratch))).resolve()
        results = Results(project, options.runs)
        started = time.monotonic()
        subprocess.run([str(RUNNER), "server", "start", "-p", str(project)], check=True)
        results.start_seconds = time.monotonic() - started
        # every command through the server first, then in-process (while the server idles:
        # the same memory taken), so that a bench stopped early has the server's numbers; the
        # commands take turns, run after run, so that the server's JIT warming up as it works
        # favours none of them
        try:
            for command, args in COMMANDS.items():
                results.first[command] = runner(project, args, server=True)[0]
            for server in (True, False)[: 1 if options.no_in_process else 2]:
                for _ in range(options.runs):
                    for command, args in COMMANDS.items():
                        measured = runner(project, args, server=server)
                        results.add(command, server, measured)
                        where = "server" if server else "in-process"
                        print(f"{where}: {command}: {measured[0]:.1f} s, CPU {measured[1]:.1f} s")
        finally:
            subprocess.run([str(RUNNER), "server", "stop", "-p", str(project)], check=True)
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
