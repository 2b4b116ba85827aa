"""Bench of the line-numbered file source (issue 27): large files in a 1 GB heap.

    .venv/bin/python bench/file_source_bench.py [--big-gb 2.0] [--short-lines 20000000]
        [--scratch /tmp/file-source-bench] [--only big,short,short-split]

Generates JSON-lines files into ``--scratch`` and streams each case through ``runner run`` (a
child process: the runner's own session, driver on ``local[*]`` with ``spark.driver.memory=1g``
set in the target's ``spark_conf``, so the driver, which is also the executor, has a 1 GB heap):

- ``big``: one file of at least ``--big-gb`` GB (lines of about 140 bytes);
- ``short``: one file of ``--short-lines`` short lines;
- ``short-split``: the same lines as ``short`` in 100 files.

Every ``BAD_EVERY``-th line is malformed JSON and every ``LOSSY_EVERY``-th (not also malformed)
has an amount a DECIMAL(10,2) would round, so the oracle is computed from the generator's
parameters: the target's row count and ``sum(id)``, and the exact set of quarantined
``(line, reason)``, which checks the line numbers across a large file's splits. Peak memory
is the resident memory of the runner's process tree (bench/upsert/processes.py); the JVM's
``-Xmx`` is read from its command line. Writes bench/results/file_source_size.md and deletes
the generated files.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.upsert.processes import load_average, run_step  # noqa: E402

RESULTS = REPO / "bench" / "results" / "file_source_size.md"
RUNNER = Path(sys.executable).with_name("runner")
BAD_EVERY = 1_000_003  # invalid JSON
LOSSY_EVERY = 250_007  # amount 1.239 for a DECIMAL(10,2): schema mismatch
NOTE = "x" * 96
SCHEMA = "id BIGINT, amount DECIMAL(10,2), note STRING"
PROJECT_YML = """\
name: file_source_bench
default_target: local
targets:
  local:
    master: local[*]
    warehouse: warehouse
    checkpoints: checkpoints
    spark_conf:
      spark.driver.memory: 1g
      spark.executor.memory: 1g
"""
STREAM_YML = """\
streams:
  events:
    format: json
    path: {path}
    schema: "{schema}"
    trigger: available_now
"""
MODEL_SQL = """\
{{{{ config(stream='events', target='bench.events', columns='{schema}') }}}}
INSERT INTO {{{{ this }}}} SELECT id, amount, note FROM {{{{ batch }}}};
"""


@dataclass(frozen=True)
class Case:
    name: str
    lines: int
    files: int
    long_lines: bool


@dataclass(frozen=True)
class Outcome:
    case: Case
    input_bytes: int
    wall: float
    peak_rss: int
    matches: bool
    detail: str


def line_text(number: int, long_lines: bool) -> bytes:
    """Line ``number`` (1-based, counted over the whole case) of a case."""
    if number % BAD_EVERY == 0:
        return b'{"id":%d,"amount":' % number
    amount = b"1.239" if number % LOSSY_EVERY == 0 else b"%d.%02d" % (number % 1000, number % 100)
    if long_lines:
        return b'{"id":%d,"amount":%s,"note":"%s"}' % (number, amount, NOTE.encode())
    return b'{"id":%d,"amount":%s}' % (number, amount)


def generate(case: Case, landing: Path) -> int:
    """Write the case's files; their total size in bytes."""
    landing.mkdir(parents=True, exist_ok=True)
    per_file = -(-case.lines // case.files)
    number = 0
    for index in range(case.files):
        with (landing / f"part-{index:03d}.json").open("wb", buffering=1 << 22) as out:
            chunk: list[bytes] = []
            for _ in range(min(per_file, case.lines - number)):
                number += 1
                chunk.append(line_text(number, case.long_lines))
                if len(chunk) == 10_000:
                    out.write(b"\n".join(chunk) + b"\n")
                    chunk = []
            if chunk:
                out.write(b"\n".join(chunk) + b"\n")
    return sum(p.stat().st_size for p in landing.iterdir())


def expected(case: Case) -> tuple[int, int, set[tuple[str, int, str]]]:
    """Target rows, their sum(id), and the quarantine's (file, line, reason)."""
    per_file = -(-case.lines // case.files)
    bad: set[tuple[str, int, str]] = set()
    for every, reason in (
        (BAD_EVERY, "invalid JSON"),
        (LOSSY_EVERY, "schema mismatch: amount (DECIMAL(10,2))"),
    ):
        for number in range(every, case.lines + 1, every):
            if reason != "invalid JSON" and number % BAD_EVERY == 0:
                continue
            file, line = divmod(number - 1, per_file)
            bad.add((f"part-{file:03d}.json", line + 1, reason))
    bad_ids = {n for n in range(1, case.lines + 1) if n % BAD_EVERY == 0 or n % LOSSY_EVERY == 0}
    rows = case.lines - len(bad_ids)
    return rows, case.lines * (case.lines + 1) // 2 - sum(bad_ids), bad


def project(work: Path, landing: Path) -> Path:
    root = work / "project"
    (root / "models").mkdir(parents=True, exist_ok=True)
    (root / "streams").mkdir(parents=True, exist_ok=True)
    (root / "project.yml").write_text(PROJECT_YML)
    (root / "streams" / "events.yml").write_text(STREAM_YML.format(path=landing, schema=SCHEMA))
    (root / "models" / "events.sql").write_text(MODEL_SQL.format(schema=SCHEMA))
    return root


def check(case: Case, root: Path) -> tuple[bool, str]:
    """Target and quarantine against the oracle, read back in a small session."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from runner.project import load
    from runner.spark.session.builder import build_session

    target = load(root, None, {}).target
    spark: SparkSession = build_session(target, "file-source-bench-check")
    try:
        warehouse = root / "warehouse"
        events = spark.read.format("delta").load(str(warehouse / "bench" / "events"))
        got = events.agg(F.count(F.lit(1)), F.sum("id")).collect()[0]
        quarantine = spark.read.format("delta").load(str(warehouse / "_quarantine" / "events"))
        bad = {
            (Path(r["file"]).name, int(r["line"]), r["reason"])
            for r in quarantine.select("file", "line", "reason").collect()
        }
    finally:
        spark.stop()
    rows, id_sum, expected_bad = expected(case)
    detail = (
        f"target {got[0]} rows (expected {rows}), sum(id) {got[1]} (expected {id_sum}), "
        f"quarantine {len(bad)} rows (expected {len(expected_bad)})"
    )
    return (got[0] == rows and got[1] == id_sum and bad == expected_bad), detail


def run_case(case: Case, scratch: Path) -> Outcome:
    work = scratch / case.name
    shutil.rmtree(work, ignore_errors=True)
    landing = work / "landing"
    print(f"==> {case.name}: generating {case.lines} lines in {case.files} file(s)", flush=True)
    size = generate(case, landing)
    root = project(work, landing)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    step = run_step(
        case.name,
        [str(RUNNER), "run", "--model", "events", "--project-dir", str(root)],
        log=work / "run.log",
        env=env,
        cwd=REPO,
    )
    shutil.rmtree(landing)  # the input is large; the tables are checked below
    matches, detail = check(case, root)
    shutil.rmtree(work, ignore_errors=True)
    return Outcome(case, size, step.wall, step.peak_rss, matches, detail)


def write_results(outcomes: list[Outcome], load_before: str, load_after: str) -> None:
    lines = [
        "# File source: large files in a 1 GB heap",
        "",
        f"`python bench/file_source_bench.py` on {dt.date.today()}, {platform.node()}, "
        f"{os.cpu_count()} cores; load average before {load_before}, after {load_after} "
        "(the machine is shared). `runner run` with `master: local[*]`, `spark.driver.memory: "
        "1g` (the driver is the executor). One batch per case (trigger available_now). Wall "
        "time includes the JVM's start and stop. Events/s = input lines / wall.",
        "",
        "| case | lines | files | input | wall | events/s | peak RSS (tree) | oracle |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for o in outcomes:
        lines.append(
            f"| {o.case.name} | {o.case.lines:,} | {o.case.files} | "
            f"{o.input_bytes / 1e9:.2f} GB | {o.wall:.0f} s | {o.case.lines / o.wall:,.0f} | "
            f"{o.peak_rss / (1 << 20):,.0f} MiB | {'equal' if o.matches else 'DIFFERENT'} |"
        )
    lines += ["", "Oracle checks:", ""]
    lines += [f"- {o.case.name}: {o.detail}" for o in outcomes]
    RESULTS.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big-gb", type=float, default=2.0)
    parser.add_argument("--short-lines", type=int, default=20_000_000)
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/file-source-bench"))
    parser.add_argument("--only", default="big,short,short-split")
    args = parser.parse_args()
    long_line = len(line_text(1, True)) + 1
    cases = {
        "big": Case("big", int(args.big_gb * 1e9) // long_line + 1, 1, True),
        "short": Case("short", args.short_lines, 1, False),
        "short-split": Case("short-split", args.short_lines, 100, False),
    }
    load_before = load_average()
    outcomes = []
    for name in args.only.split(","):
        outcome = run_case(cases[name], args.scratch)
        print(f"==> {name}: {outcome.wall:.0f}s, {outcome.detail}", flush=True)
        outcomes.append(outcome)
        write_results(outcomes, load_before, load_average())
    print(RESULTS.read_text())
    if not all(o.matches for o in outcomes):
        raise SystemExit("the target or the quarantine differs from the oracle")


if __name__ == "__main__":
    main()
