"""Benchmark `runner plan` over 200 generated models (those of bench/lint_bench.py).

    .venv/bin/python bench/plan_bench.py [--models 200] [--repeat 5]

Records what every model "last ran" with the function the Spark half calls at each start
(runner/last_run.py), edits every third model's SQL, then times `runner plan --format json` as
a CLI subprocess (wall and CPU time; this checkout's code) and in-process, checks its exit code
(1: edited models need action) and that no JVM-side module was imported, and writes
bench/results/plan.md. The issue's goal: plan of 200 models under 1 s.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.lint_bench import ENV, RUNNER, generate_project, machine, summary, uptime
from runner.last_run import model_record, write_last_run
from runner.plan import plan_models
from runner.project import load
from runner.selection import select_models

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "plan.md"
JVM_CHECK = (
    "import sys\nfrom typer.testing import CliRunner\nfrom runner.cli.app import app\n"
    "CliRunner().invoke(app, ['plan', '-p', sys.argv[1]])\n"
    "print(any(m.split('.')[0] in ('pyspark', 'py4j', 'delta') for m in sys.modules))\n"
)


def record_and_edit(root: Path) -> int:
    """Record every model as run, then edit every third one; returns how many were edited."""
    project = load(root)
    for model in project.models.values():
        write_last_run(project.target.checkpoint_for(model.name), model_record(project, model))
    edited = 0
    for n, path in enumerate(sorted((root / "models").glob("*.sql"))):
        if n % 3 == 0:
            text = path.read_text()
            assert "\nON " in text, path
            path.write_text(text.replace("\nON ", "\nON 1 = 1 AND ", 1))
            edited += 1
    return edited


def time_cli(root: Path, repeat: int) -> tuple[list[float], list[float], dict]:
    import resource

    times, cpu, report = [], [], {}
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        args = [str(RUNNER), "plan", "--format", "json", "-p", str(root)]
        done = subprocess.run(args, capture_output=True, text=True, env=ENV)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 1:
            raise SystemExit(f"runner plan exited {done.returncode}:\n{done.stderr}")
        report = json.loads(done.stdout)
    return times, cpu, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    before = uptime()
    with tempfile.TemporaryDirectory() as tmp:
        root = generate_project(Path(tmp) / "generated", args.models)
        edited = record_and_edit(root)
        time_cli(root, 1)  # fills the template cache
        wall, cpu, report = time_cli(root, args.repeat)
        in_process = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            project = load(root)
            plan_models(project, select_models(project, None))
            in_process.append(time.perf_counter() - started)
        check = [sys.executable, "-c", JVM_CHECK, str(root)]
        jvm = subprocess.run(check, capture_output=True, text=True, env=ENV).stdout.strip()
    after = uptime()
    lines = [
        "# `runner plan` benchmark",
        "",
        f"- Date: {dt.date.today().isoformat()}",
        f"- Machine: {machine()}",
        f"- Command: `.venv/bin/python bench/plan_bench.py --models {args.models} "
        f"--repeat {args.repeat}`",
        f"- Project: {args.models} generated models (bench/lint_bench.py), each recorded as run; "
        f"{edited} then edited (their MERGE's ON)",
        f"- Needs action: {report['summary']['needs_action']} of {report['summary']['models']}",
        f"- A pyspark / py4j / delta module imported: {jvm}",
        f"- `uptime` before / after: `{before}` / `{after}`",
        "",
        "| run | time |",
        "| --- | --- |",
        f"| CLI wall (`runner plan --format json`) | {summary(wall)} |",
        f"| CLI CPU | {summary(cpu)} |",
        f"| in-process (load + plan_models) | {summary(in_process)} |",
        "",
    ]
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
