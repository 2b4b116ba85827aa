"""The upsert bench of issue #12: the runner, the seeds' hand-written foreachBatch recipe of the
same logic (as the seeds write it, on Spark's defaults, and again on the runner's Spark
settings), and a plain Delta append, one after another over the same generated order events;
then a target-size curve; then a table of ratios and a plot in bench/results/.

    bash bench/upsert.sh [--size small|full] [--no-curve]     (installs, then runs this)
    .venv/bin/python bench/upsert_bench.py [--size small|full] [--no-curve] [--work DIR]

Every step runs as its own process with its own JVM (`runner run`, or a module of
bench/upsert/ that builds its session from the same project.yml target the runner uses), and
its wall time and peak memory (RSS over its process tree) are measured from here. At the end
one more process reads back the targets, the runner's event logs and the Delta histories;
the bench stops with an error, writing no results, unless the runner's and both recipes'
targets hold exactly the rows expected from the input.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.upsert.events import (  # noqa: E402
    InputSummary,
    curve_batches,
    expected_rows,
    generate_orders,
    land_files,
    write_expected,
)
from bench.upsert.plan import (  # noqa: E402
    LAYOUTS,
    RECIPES,
    SIZES,
    BenchSize,
    Layout,
    curve_files,
)
from bench.upsert.processes import StepRun, load_average, run_step  # noqa: E402
from bench.upsert.projects import (  # noqa: E402
    CURVE_MODEL,
    CURVE_TABLE,
    ORDERS_MODEL,
    ORDERS_TABLE,
    curve_project,
    orders_project,
)
from bench.upsert.results import (  # noqa: E402
    BenchResults,
    CurvePoint,
    VariantResult,
    handwritten_batches,
    merge_commits,
    runner_result,
)

RESULTS = REPO / "bench" / "results"
RUNNER = Path(sys.executable).with_name("runner")


def say(text: str) -> None:
    print(text, flush=True)


@dataclass
class Steps:
    """Runs the bench's steps as child processes, numbering them as they go."""

    work: Path
    env: dict[str, str]
    count: int = 0

    def run(self, label: str, command: list[str]) -> StepRun:
        self.count += 1
        say(f"==> step {self.count}, {label}: {' '.join(command)}")
        step = run_step(
            label, command, log=self.work / "logs" / f"{label}.log", env=self.env, cwd=REPO
        )
        say(f"==> {label}: {step.wall:.1f}s, peak memory {step.peak_rss / (1 << 20):.0f} MiB")
        return step

    def module(self, label: str, module: str, *args: str | Path) -> StepRun:
        return self.run(label, [sys.executable, "-m", module, *map(str, args)])


@dataclass(frozen=True)
class CurvePlan:
    rows: int
    layout: Layout
    project: Path
    expected_rows: int  # the target's rows plus the orders the batches insert

    @property
    def name(self) -> str:
        return f"curve-{self.layout.name}-{self.rows}"


@dataclass(frozen=True)
class CurveRun:
    plan: CurvePlan
    step: StepRun


# -- the three variants -----------------------------------------------------------------------


def run_variants(steps: Steps, size: BenchSize, landing: Path) -> dict[str, tuple[StepRun, Path]]:
    """runner, recipe (as the seeds write it), recipe-tuned (on the runner's Spark settings),
    append over the same files; each with its project directory."""
    work, every = steps.work, size.optimize_every
    runs = {}
    project = orders_project(work / "runner", landing, every)
    runs["runner"] = (steps.run("runner", runner_command(project, ORDERS_MODEL)), project)
    optimize = ["--optimize-every", str(every)]
    handwritten: tuple[tuple[str, str, list[str]], ...] = (
        ("recipe", "recipe", [*optimize, "--spark-defaults"]),
        ("recipe-tuned", "recipe", optimize),
        ("append", "append", []),
    )
    for name, module, extra in handwritten:
        project = orders_project(work / name, landing, every)
        step = steps.module(
            name,
            f"bench.upsert.{module}",
            *("--project", project, "--landing", landing, "--result", project / "result.json"),
            *extra,
        )
        runs[name] = (step, project)
    return runs


def runner_command(project: Path, model: str) -> list[str]:
    return [str(RUNNER), "run", "--model", model, "--project-dir", str(project)]


# -- the target-size curve --------------------------------------------------------------------


def run_curve(steps: Steps, size: BenchSize) -> list[CurveRun]:
    """Pre-build a target per size and layout in one process, then stream the same batches
    into each with `runner run`, size by size (every layout of a size back to back)."""
    plans = []
    for rows in size.curve_targets:
        batches = curve_batches(rows, size.curve_batches, size.curve_batch_events)
        landing = steps.work / "landing" / f"curve-{rows}"
        land_files(batches, landing)
        inserted = sum(1 for batch in batches for e in batch if int(e.order_id[1:]) >= rows)
        for layout in LAYOUTS:
            project = curve_project(steps.work / "curve" / f"{layout.name}-{rows}", landing, layout)
            plans.append(CurvePlan(rows, layout, project, rows + inserted))
    request = steps.work / "curve_targets.json"
    targets = [
        {
            "project": str(plan.project),
            "rows": plan.rows,
            "files": curve_files(plan.rows),
            "cluster_by": plan.layout.cluster_by,
            "table_properties": dict(plan.layout.table_properties),
        }
        for plan in plans
    ]
    request.write_text(json.dumps(targets, indent=1))
    steps.module("curve-targets", "bench.upsert.curve_targets", request)
    return [
        CurveRun(plan, steps.run(plan.name, runner_command(plan.project, CURVE_MODEL)))
        for plan in plans
    ]


# -- reading back and checking ----------------------------------------------------------------


def read_back(
    steps: Steps, variants: dict[str, tuple[StepRun, Path]], curve: list[CurveRun]
) -> dict[str, Any]:
    runner_project = variants["runner"][1]
    runner_target = runner_project / "warehouse" / "bench" / "orders"
    recipes = {name: variants[name][1] / "warehouse" / "bench" / "orders" for name in RECIPES}
    request = {
        "session_project": str(runner_project),
        "expected": str(steps.work / "expected.jsonl"),
        "compare": {"runner": str(runner_target), **{n: str(t) for n, t in recipes.items()}},
        "counts": {
            "append": str(variants["append"][1] / "warehouse" / "bench" / "orders_appended"),
            **{c.plan.name: str(table_location(c.plan.project, CURVE_TABLE)) for c in curve},
        },
        "event_logs": {
            "runner": [str(runner_project), ORDERS_MODEL],
            **{c.plan.name: [str(c.plan.project), CURVE_MODEL] for c in curve},
        },
        "histories": {
            "runner": str(table_location(runner_project, ORDERS_TABLE)),
            **{n: str(t) for n, t in recipes.items()},
            **{c.plan.name: str(table_location(c.plan.project, CURVE_TABLE)) for c in curve},
        },
    }
    asked, answer = steps.work / "readback_request.json", steps.work / "readback.json"
    asked.write_text(json.dumps(request, indent=1))
    steps.module("readback", "bench.upsert.readback", asked, answer)
    return dict(json.loads(answer.read_text()))


def table_location(project: Path, table: str) -> Path:
    schema, name = table.split(".")
    return project / "warehouse" / schema / name


def check(answer: dict[str, Any], inputs: InputSummary, curve: list[CurveRun]) -> None:
    """Stop loudly unless every target holds what it must: a benchmark of a wrong result is
    worth nothing."""
    problems = []
    for diff in answer["compare"]["differences"]:
        for side, other, count, examples in (
            ("left", "right", diff["only_left"], diff["examples_left"]),
            ("right", "left", diff["only_right"], diff["examples_right"]),
        ):
            if count:
                problems.append(
                    f"{diff[side]} has {count} rows that {diff[other]} has not, for example "
                    + "; ".join(json.dumps(e) for e in examples)
                )
    expected_counts = {"append": inputs.events} | {c.plan.name: c.plan.expected_rows for c in curve}
    for name, expected in expected_counts.items():
        found = answer["counts"][name]
        if found != expected:
            problems.append(f"{name}'s target holds {found} rows, expected {expected}")
    if problems:
        raise SystemExit(
            "error: the targets are not what the input must produce; no results written.\n  "
            + "\n  ".join(problems)
        )
    rows = answer["compare"]["rows"]
    say(
        f"==> checked: runner and recipe targets = the {rows['expected']:,} expected rows; "
        "append and curve targets hold the rows they must"
    )


# -- putting it together ----------------------------------------------------------------------


def variant_results(
    variants: dict[str, tuple[StepRun, Path]], answer: dict[str, Any]
) -> dict[str, VariantResult]:
    step, _ = variants["runner"]
    logs, histories = answer["event_logs"], answer["histories"]
    results = {"runner": runner_result("runner", step, logs["runner"], histories["runner"])}
    for name in (*RECIPES, "append"):
        step, project = variants[name]
        written = json.loads((project / "result.json").read_text())
        results[name] = VariantResult(
            name,
            step.started,
            step.wall,
            step.peak_rss,
            handwritten_batches(written),
            merge_commits(histories.get(name, [])),
            tuple(written["progress"]),
        )
    return results


def curve_points(curve: list[CurveRun], answer: dict[str, Any]) -> list[CurvePoint]:
    logs, histories = answer["event_logs"], answer["histories"]
    return [
        CurvePoint(
            c.plan.rows,
            c.plan.layout.name,
            runner_result(c.plan.name, c.step, logs[c.plan.name], histories[c.plan.name]),
        )
        for c in curve
    ]


def child_env() -> dict[str, str]:
    """The children import this checkout's bench/ and runner/ first, and print as they go."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def output_paths(size: BenchSize) -> tuple[Path, Path]:
    stem = "upsert" if size.name == "full" else f"upsert-{size.name}"
    return RESULTS / f"{stem}.md", RESULTS / f"{stem}.png"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--no-curve", action="store_true", help="skip the target-size curve")
    parser.add_argument("--work", type=Path, help="default: target/bench/upsert-<size>")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    size = SIZES[args.size]
    work = (args.work or REPO / "target" / "bench" / f"upsert-{size.name}").resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    started_at, clock, load_start = datetime.now(UTC), time.monotonic(), load_average()
    say(f"==> upsert bench, size {size.label}; load average {load_start}; work files in {work}")

    orders = generate_orders(size.orders)
    landing = work / "landing" / "orders"
    land_files(orders.files, landing)
    write_expected(expected_rows(orders.files), work / "expected.jsonl")
    inputs = orders.summary()
    say(
        f"==> input: {inputs.files} files, {inputs.events:,} events, {inputs.duplicates:,} "
        f"duplicates, {inputs.late:,} late, {inputs.deletes:,} deletes"
    )

    steps = Steps(work, child_env())
    variants = run_variants(steps, size, landing)
    curve = [] if args.no_curve else run_curve(steps, size)
    answer = read_back(steps, variants, curve)
    check(answer, inputs, curve)

    results = BenchResults(
        size=size,
        command=os.environ.get("BENCH_COMMAND") or shlex.join(["python", *sys.argv]),
        started_at=started_at,
        load_start=load_start,
        load_end=load_average(),
        wall=time.monotonic() - clock,
        inputs=inputs,
        variants=variant_results(variants, answer),
        curve=curve_points(curve, answer),
        commit=commit(),
        jvm_options=os.environ.get("RUNNER_JVM_OPTIONS", ""),
    )
    write_outputs(results)


def write_outputs(results: BenchResults) -> None:
    from bench.upsert.plot import write_plot
    from bench.upsert.report import markdown, summary_lines

    text_path, plot_path = output_paths(results.size)
    text_path.write_text(markdown(results))
    write_plot(results, plot_path)
    for line in summary_lines(results):
        say(line)
    say(
        f"==> wrote {text_path.relative_to(REPO)} and {plot_path.relative_to(REPO)} "
        f"({results.wall:.0f}s in all)"
    )


if __name__ == "__main__":
    main()
