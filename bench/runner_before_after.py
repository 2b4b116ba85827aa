"""The runner of an earlier commit against this checkout's, on the same input, taking turns.

    .venv/bin/python bench/runner_before_after.py --before 224c0da --change "what changed" \
        --name short-name

A change to the runner's batch path is argued from this bench (issue #33 asks for a before and
an after row per change). It makes a git worktree of ``--before`` under
``target/bench/before-after/``, lands goal 1's kind of input once (seeded order events, one file
a batch, `bench/upsert/events.py`), then runs `runner run` of the upsert bench's orders model
over it, once per round with each code, taking turns in mirrored pairs (before, after, after,
before, before, after, ...: a machine that slows down or speeds up over the runs favours
neither code), each run in a fresh project and its own process and JVM. The earlier code is
the worktree's `runner` package, put ahead of this checkout's with ``PYTHONPATH``; everything
else (Python packages, Spark, Delta's jars) is shared, so only the runner's own code differs.

At the end one JVM reads every run's event log. The results (``results/before-after-<name>.md``,
one file per change) give, per run and as the median over the runs of each code: the median
batch (the event log's ``seconds``), the median start to next start (what a stream's
throughput follows: the batch, its event-log write, Spark's commit and the next trigger), the
MERGE statement and the source phase, all over batches ``--skip`` onward (the first ones warm
the JVM up). With ``--spark-durations`` each run also writes Spark's event log (uncompressed, in
its project), and the results add two of Spark's own durations per trigger
(``StreamingQueryProgress.durationMs``, median): ``queryPlanning`` and the trigger outside the
foreachBatch call (``triggerExecution`` less ``addBatch``: listing, planning, the checkpoint's
writes).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.upsert.events import OrdersSpec, generate_orders, land_files  # noqa: E402
from bench.upsert.processes import commit, load_average  # noqa: E402
from bench.upsert.projects import ORDERS_MODEL, orders_project, runner_command  # noqa: E402

RESULTS = REPO / "bench" / "results"
WORK = REPO / "target" / "bench" / "before-after"


@dataclass(frozen=True)
class Run:
    code: str  # "before" or "after"
    round: int
    project: Path
    wall: float


@dataclass(frozen=True)
class Figures:
    batch: float
    cycle: float
    merge: float
    source: float
    batches: int
    planning: float | None = None  # Spark's queryPlanning per trigger, ms (--spark-durations)
    outside: float | None = None  # triggerExecution - addBatch, ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the earlier commit, e.g. 224c0da")
    parser.add_argument("--change", required=True, help="what the later code changed")
    parser.add_argument("--files", type=int, default=20, help="batches per run (one file each)")
    parser.add_argument("--events", type=int, default=2_000, help="events per file")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each code, taking turns")
    parser.add_argument("--skip", type=int, default=3, help="first batches left out of medians")
    parser.add_argument(
        "--malformed-every",
        type=int,
        default=0,
        help="a malformed line after every Nth event of each file, for the quarantine's path "
        "(0: none)",
    )
    parser.add_argument(
        "--spark-durations",
        action="store_true",
        help="also report Spark's queryPlanning and the trigger outside foreachBatch, from "
        "Spark's event log (written by every run of both codes)",
    )
    parser.add_argument(
        "--name", default="change", help="results/before-after-<name>.md: one file per change"
    )
    args = parser.parse_args()

    before = subprocess.run(
        ["git", "rev-parse", "--short", args.before], cwd=REPO, text=True, capture_output=True,
        check=True,
    ).stdout.strip()  # fmt: skip
    after = commit()

    shutil.rmtree(WORK, ignore_errors=True)
    worktree = WORK / f"code-{before}"
    subprocess.run(["git", "worktree", "prune"], cwd=REPO, check=True)
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(worktree), before], cwd=REPO, check=True,
        capture_output=True,
    )  # fmt: skip
    try:
        landing = WORK / "landing"
        spec = OrdersSpec(files=args.files, events_per_file=args.events, keys=10 * args.events)
        for path in land_files(generate_orders(spec).files, landing):
            with_malformed_lines(path, args.malformed_every)
        load_before = load_average()
        runs = []
        for number in range(1, args.rounds + 1):
            for code in round_order(number):
                runs.append(run_once(code, number, landing, worktree, args.spark_durations))
        load_after = load_average()
        figures = read_figures(runs, args.skip)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=REPO)
    results = RESULTS / f"before-after-{args.name}.md"
    results.write_text(report(runs, figures, args, before, after, load_before, load_after))
    print(results.read_text())


def round_order(number: int) -> tuple[str, str]:
    """Which code runs first in round ``number`` (from 1): before in odd rounds, after in even
    ones. With plain turns the later code always runs after the earlier one, so a drift of the
    machine over the runs reads as the change's effect (bench/README.md, the ParallelGC trial)."""
    return ("before", "after") if number % 2 else ("after", "before")


MALFORMED_LINE = '{"order_id": "cut short'


def with_malformed_lines(path: Path, every: int) -> None:
    """Put a malformed line (quarantined as invalid JSON) after every ``every``-th line of
    ``path``, keeping its modification time (the stream's file order)."""
    if every <= 0:
        return
    stat = path.stat()
    lines = path.read_text().splitlines()
    out = []
    for number, line in enumerate(lines, start=1):
        out.append(line)
        if number % every == 0:
            out.append(MALFORMED_LINE)
    path.write_text("\n".join(out) + "\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def run_once(code: str, number: int, landing: Path, worktree: Path, durations: bool) -> Run:
    project = orders_project(WORK / f"{code}-{number}", landing, None)
    if durations:
        events = project / SPARK_EVENTS
        events.mkdir()
        with (project / "project.yml").open("a") as yml:
            yml.write(
                "      spark.eventLog.enabled: 'true'\n"
                f"      spark.eventLog.dir: '{events}'\n"
                "      spark.eventLog.compress: 'false'\n"
            )
    env = dict(os.environ)
    env.setdefault("RUNNER_JARS_DIR", str(REPO / ".cache" / "jars"))  # the worktree has none
    if code == "before":
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(worktree), env.get("PYTHONPATH")]))
    started = time.monotonic()
    subprocess.run(
        runner_command(project, ORDERS_MODEL), env=env, check=True, stdout=subprocess.DEVNULL
    )
    wall = time.monotonic() - started
    print(f"==> {code} round {number}: {wall:.1f} s", flush=True)
    return Run(code, number, project, wall)


SPARK_EVENTS = "spark-events"


def spark_durations(project: Path, skip: int) -> tuple[float, float] | None:
    """The medians of Spark's queryPlanning and of triggerExecution - addBatch (ms) over the
    triggers from ``skip`` onward, from the run's Spark event log; None without one."""
    progress = []
    for path in sorted((project / SPARK_EVENTS).rglob("events_*")):
        with path.open() as lines:
            for line in lines:
                if "QueryProgressEvent" in line:
                    event = json.loads(line)["progress"]
                    progress.append((event["batchId"], event["durationMs"]))
    kept = [d for _, d in sorted(progress, key=lambda p: p[0])][skip:]
    if not kept:
        return None
    planning = statistics.median(d.get("queryPlanning", 0) for d in kept)
    outside = statistics.median(d["triggerExecution"] - d.get("addBatch", 0) for d in kept)
    return planning, outside


def read_figures(runs: list[Run], skip: int) -> dict[tuple[str, int], Figures]:
    from runner.project import load
    from runner.spark.batch.eventlog import read_history
    from runner.spark.session.builder import build_session

    spark = build_session(load(runs[0].project).target, "before-after-readback")
    found = {}
    for run in runs:
        rows = read_history(spark, load(run.project).target, ORDERS_MODEL, 100_000)
        rows = sorted(rows, key=lambda r: r["batch_id"])
        starts = [r["started_at"].timestamp() for r in rows]
        cycles = [b - a for a, b in zip(starts, starts[1:], strict=False)][skip:]
        kept = rows[skip:]
        durations = spark_durations(run.project, skip)
        found[(run.code, run.round)] = Figures(
            batch=statistics.median(r["seconds"] for r in kept),
            cycle=statistics.median(cycles),
            merge=statistics.median(
                sum(s["seconds"] for s in r["statements"] if s["keyword"] == "MERGE") for r in kept
            ),
            source=statistics.median(
                next((p["seconds"] for p in r["phases"] if p["phase"] == "source"), 0.0)
                for r in kept
            ),
            batches=len(rows),
            planning=durations[0] if durations else None,
            outside=durations[1] if durations else None,
        )
    spark.stop()
    return found


def report(
    runs: list[Run],
    figures: dict[tuple[str, int], Figures],
    args: argparse.Namespace,
    before: str,
    after: str,
    load_before: str,
    load_after: str,
) -> str:
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    spark = args.spark_durations

    def sparks(planning: float | None, outside: float | None) -> str:
        if not spark:
            return ""
        return (
            " " + " | ".join("-" if v is None else f"{v:.0f}" for v in (planning, outside)) + " |"
        )

    rows = []
    for run in runs:
        f = figures[(run.code, run.round)]
        rows.append(
            f"| {run.code} | {run.round} | {f.batch:.2f} | {f.cycle:.2f} | {f.merge:.2f} "
            f"| {f.source:.2f} | {run.wall:.1f} |" + sparks(f.planning, f.outside)
        )
    summary = []
    for code in ("before", "after"):
        mine = [figures[(r.code, r.round)] for r in runs if r.code == code]
        walls = [r.wall for r in runs if r.code == code]
        planned = [f.planning for f in mine if f.planning is not None]
        outside = [f.outside for f in mine if f.outside is not None]
        summary.append(
            f"| **{code}** (median of {len(mine)}) "
            f"| {statistics.median(f.batch for f in mine):.2f} "
            f"| {statistics.median(f.cycle for f in mine):.2f} "
            f"| {statistics.median(f.merge for f in mine):.2f} "
            f"| {statistics.median(f.source for f in mine):.2f} "
            f"| {statistics.median(walls):.1f} |"
            + sparks(
                statistics.median(planned) if planned else None,
                statistics.median(outside) if outside else None,
            )
        )
    header = "| code | round | batch | start to start | MERGE | source | wall |"
    rule = "|---|---|---|---|---|---|---|"
    if spark:
        header += " queryPlanning (ms) | trigger outside foreachBatch (ms) |"
        rule += "---|---|"
    return (
        "# The runner before and after a change, on the same input\n\n"
        f"`.venv/bin/python bench/runner_before_after.py --before {args.before} --change "
        f'"{args.change}" --files {args.files} --events {args.events} --rounds {args.rounds} '
        f"--skip {args.skip}"
        + (f" --malformed-every {args.malformed_every}" if args.malformed_every else "")
        + (" --spark-durations" if spark else "")
        + f" --name {args.name}`, {when}, {os.cpu_count()} CPUs. Load average "
        f"(1/5/15 min) before {load_before}, after {load_after}.\n\n"
        f"**Change:** {args.change}. *before* is commit {before}, *after* is {after}. Each run "
        f"is `runner run` of the upsert bench's orders model over the same {args.files} files of "
        f"{args.events:,} seeded order events (one batch each, no maintenance)"
        + (
            f", each with a malformed line after every {args.malformed_every}th event (to the "
            "quarantine)"
            if args.malformed_every
            else ""
        )
        + ", in a fresh "
        "project and its own JVM; the codes take turns in mirrored pairs (before, after, after, "
        "before, ...). Medians over batches "
        f"{args.skip} onward, from each run's event log, in seconds: *batch* is the event "
        "log's `seconds` (up to the event-log write), *start to start* from one batch's start "
        "to the next one's (the batch, its event-log write, Spark's commit, the next trigger), "
        "*MERGE* the statement, *source* the source phase; *wall* is the whole process."
        + (
            " The last two columns are Spark's own durations per trigger (its event log, "
            "written by every run: `StreamingQueryProgress.durationMs`, median over the same "
            "batches): `queryPlanning`, and `triggerExecution` less `addBatch`, the trigger's "
            "time outside the foreachBatch call (file listing, planning, the checkpoint's "
            "writes)."
            if spark
            else ""
        )
        + f"\n\n{header}\n{rule}\n"
        + "\n".join(rows)
        + "\n"
        + "\n".join(summary)
        + "\n"
    )


if __name__ == "__main__":
    main()
