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
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.upsert import freshness_run, large_run, small_files_run  # noqa: E402
from bench.upsert.events import (  # noqa: E402
    curve_batches,
    expected_rows,
    generate_orders,
    land_files,
    write_expected,
)
from bench.upsert.freshness_run import run_freshness  # noqa: E402
from bench.upsert.large_run import run_large  # noqa: E402
from bench.upsert.plan import (  # noqa: E402
    LAYOUTS,
    MAINTENANCE_NAMES,
    RECIPES,
    RUNNER_DEFAULT_MAINTENANCE,
    SIZES,
    BenchSize,
    Layout,
    curve_files,
)
from bench.upsert.processes import StepRun, Steps, commit, load_average, say  # noqa: E402
from bench.upsert.projects import (  # noqa: E402
    CURVE_MODEL,
    CURVE_TABLE,
    ORDERS_MODEL,
    ORDERS_TABLE,
    curve_project,
    orders_project,
    runner_command,
    table_location,
)
from bench.upsert.results import (  # noqa: E402
    BenchResults,
    CurvePoint,
    VariantResult,
    handwritten_result,
    runner_result,
)
from bench.upsert.small_files_run import run_small_files  # noqa: E402

RESULTS = REPO / "bench" / "results"


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
        CurveRun(
            plan, steps.run(plan.name, runner_command(plan.project, CURVE_MODEL, pre_built=True))
        )
        for plan in plans
    ]


# -- reading back and checking ----------------------------------------------------------------


def small_batch_request(
    work: Path, variants: dict[str, tuple[StepRun, Path]], curve: list[CurveRun]
) -> dict[str, Any]:
    """What the readback reads of goal 1's variants and the curve (goal 5)."""
    request: dict[str, Any] = {
        "counts": {c.plan.name: str(table_location(c.plan.project, CURVE_TABLE)) for c in curve},
        "event_logs": {c.plan.name: [str(c.plan.project), CURVE_MODEL] for c in curve},
        "histories": {c.plan.name: str(table_location(c.plan.project, CURVE_TABLE)) for c in curve},
    }
    if variants:
        runner_project = variants["runner"][1]
        upserts = {n: table_location(variants[n][1], ORDERS_TABLE) for n in ("runner", *RECIPES)}
        request["checks"] = {
            "small-batches": {
                "expected": str(work / "expected.jsonl"),
                "tables": {n: str(t) for n, t in upserts.items()},
            }
        }
        request["counts"]["append"] = str(
            table_location(variants["append"][1], "bench.orders_appended")
        )
        request["event_logs"]["runner"] = [str(runner_project), ORDERS_MODEL]
        request["histories"] |= {n: str(t) for n, t in upserts.items()}
    return request


def read_back(steps: Steps, session_project: Path, parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One readback process for every goal's targets: the parts' sections merged."""
    request: dict[str, Any] = {"session_project": str(session_project)}
    for part in parts:
        for section, items in part.items():
            if section == "scans":
                request[section] = items
            else:
                request.setdefault(section, {}).update(items)
    asked, answer = steps.work / "readback_request.json", steps.work / "readback.json"
    asked.write_text(json.dumps(request, indent=1))
    steps.module("readback", "bench.upsert.readback", asked, answer)
    return dict(json.loads(answer.read_text()))


def check(answer: dict[str, Any], expected_counts: dict[str, int]) -> None:
    """Stop loudly unless every target holds what it must: a benchmark of a wrong result is
    worth nothing."""
    problems = []
    for group, checked in answer["checks"].items():
        for diff in checked["differences"]:
            for side, other, count, examples in (
                ("left", "right", diff["only_left"], diff["examples_left"]),
                ("right", "left", diff["only_right"], diff["examples_right"]),
            ):
                if count:
                    problems.append(
                        f"{group}: {diff[side]} has {count} rows that {diff[other]} has not, "
                        "for example " + "; ".join(json.dumps(e) for e in examples)
                    )
    for name, expected in expected_counts.items():
        found = answer["counts"][name]
        if found != expected:
            problems.append(f"{name}'s target holds {found} rows, expected {expected}")
    problems += event_log_gaps(answer.get("event_logs", {}))
    if problems:
        raise SystemExit(
            "error: the targets are not what the input must produce; no results written.\n  "
            + "\n  ".join(problems)
        )
    for group, checked in answer["checks"].items():
        say(
            f"==> checked {group}: "
            + ", ".join(n for n in checked["rows"] if n != "expected")
            + f" = the {checked['rows']['expected']:,} expected rows"
        )
    if expected_counts:
        say(f"==> checked: {', '.join(expected_counts)} hold the rows they must")


def event_log_gaps(event_logs: dict[str, Any]) -> list[str]:
    """What is wrong with each runner variant's event log: a batch without its row, or with two
    (`runner history` must hold one row per batch the stream ran)."""
    problems = []
    for name, log in event_logs.items():
        rows_of = Counter(row["batch_id"] for row in log["rows"])
        if not rows_of:
            continue
        missing = sorted(set(range(min(rows_of), max(rows_of) + 1)) - rows_of.keys())
        repeated = sorted(batch for batch, rows in rows_of.items() if rows > 1)
        if missing or repeated:
            problems.append(
                f"{name}'s event log: no row for batch(es) {missing}, two or more for {repeated}"
            )
    return problems


# -- putting it together ----------------------------------------------------------------------


def variant_results(
    variants: dict[str, tuple[StepRun, Path]], answer: dict[str, Any]
) -> dict[str, VariantResult]:
    if not variants:
        return {}
    step, _ = variants["runner"]
    logs, histories = answer["event_logs"], answer["histories"]
    results = {"runner": runner_result("runner", step, logs["runner"], histories["runner"])}
    for name in (*RECIPES, "append"):
        step, project = variants[name]
        results[name] = handwritten_result(name, step, project, histories.get(name, []))
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


def output_paths(
    size: BenchSize, goals: frozenset[int], maintenance: tuple[str, ...] = MAINTENANCE_NAMES
) -> tuple[Path, Path]:
    """upsert.md (full) or upsert-<size>.md; a run of some goals only adds which, and a run of
    some of goal 4's maintenance variants which of them (upsert-goals-4-none.md)."""
    stem = "upsert" if size.name == "full" else f"upsert-{size.name}"
    if goals != ALL_GOALS:
        stem += "-goals-" + "".join(map(str, sorted(goals)))
    if 4 in goals and maintenance != MAINTENANCE_NAMES:
        stem += "-" + "-".join(maintenance)
    return RESULTS / f"{stem}.md", RESULTS / f"{stem}.png"


ALL_GOALS = frozenset({1, 2, 3, 4, 5})


def goal_numbers(text: str) -> frozenset[int]:
    try:
        goals = frozenset(int(part) for part in text.split(","))
    except ValueError:
        goals = frozenset({0})
    if not goals <= ALL_GOALS:
        raise argparse.ArgumentTypeError(f"{text!r}: goal numbers 1 to 5, comma-separated")
    return goals


def maintenance_names(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(","))
    unknown = [name for name in names if name not in MAINTENANCE_NAMES]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"{', '.join(unknown)}: goal 4's variants are {', '.join(MAINTENANCE_NAMES)}"
        )
    if RUNNER_DEFAULT_MAINTENANCE not in names:
        raise argparse.ArgumentTypeError(
            f"{text!r}: include {RUNNER_DEFAULT_MAINTENANCE!r}, the runner's default: the "
            "OPTIMIZEd copy every variant is compared with is a copy of its target"
        )
    return tuple(name for name in MAINTENANCE_NAMES if name in names)  # in the bench's order


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--no-curve", action="store_true", help="skip the target-size curve")
    parser.add_argument(
        "--goals",
        type=goal_numbers,
        default=ALL_GOALS,
        help="run only these goals' parts, e.g. 2,4 (default: all, 1 to 5; goals 1 and 5 share "
        "the small-batch variants, 5 adds the curve)",
    )
    parser.add_argument(
        "--maintenance",
        type=maintenance_names,
        default=MAINTENANCE_NAMES,
        help="goal 4: land its batches only with these maintenance variants, e.g. none (a "
        f"quarter of goal 4's time); default: all, {','.join(MAINTENANCE_NAMES)}",
    )
    parser.add_argument("--work", type=Path, help="default: target/bench/upsert-<size>")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    size, goals = SIZES[args.size], args.goals
    work = (args.work or REPO / "target" / "bench" / f"upsert-{size.name}").resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    started_at, clock, load_start = datetime.now(UTC), time.monotonic(), load_average()
    say(
        f"==> upsert bench, size {size.label}, goals {', '.join(map(str, sorted(goals)))}; "
        f"load average {load_start}; work files in {work}"
    )
    steps = Steps(work, child_env(), REPO)
    parts: list[dict[str, Any]] = []
    expected_counts: dict[str, int] = {}

    inputs, variants, curve = None, {}, []
    if goals & {1, 5}:
        orders = generate_orders(size.orders)
        landing = work / "landing" / "orders"
        land_files(orders.files, landing)
        write_expected(expected_rows(orders.files), work / "expected.jsonl")
        inputs = orders.summary()
        say(
            f"==> input: {inputs.files} files, {inputs.events:,} events, {inputs.duplicates:,} "
            f"duplicates, {inputs.late:,} late, {inputs.deletes:,} deletes"
        )
        variants = run_variants(steps, size, landing)
        curve = [] if args.no_curve or 5 not in goals else run_curve(steps, size)
        parts.append(small_batch_request(work, variants, curve))
        expected_counts |= {"append": inputs.events} | {
            c.plan.name: c.plan.expected_rows for c in curve
        }
    large = run_large(steps, size) if 2 in goals else []
    if large:
        parts.append(large_run.readback_request(large))
        expected_counts |= large_run.expected_counts(large)
    fresh = run_freshness(steps, size) if 3 in goals else []
    if fresh:
        parts.append(freshness_run.readback_request(fresh))
    small_files = run_small_files(steps, size, args.maintenance) if 4 in goals else None
    if small_files:
        parts.append(small_files_run.readback_request(small_files))

    answer = read_back(steps, any_project(work), parts)
    check(answer, expected_counts)
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
        large=large_run.large_cases(large, size, answer),
        freshness=freshness_run.freshness_results(fresh),
        small_files=small_files_run.small_files_results(small_files, answer) if small_files else {},
    )
    write_outputs(results, goals, args.maintenance)


def any_project(work: Path) -> Path:
    """A project the bench wrote (they share one project.yml): the readback's session."""
    return min(work.rglob("project.yml")).parent


def write_outputs(
    results: BenchResults, goals: frozenset[int], maintenance: tuple[str, ...]
) -> None:
    from bench.upsert.plot import write_plot
    from bench.upsert.report import markdown, summary_lines

    text_path, plot_path = output_paths(results.size, goals, maintenance)
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
