"""Benchmark `runner lint` (and `runner compile`): the example project and 200 generated models.

    .venv/bin/python bench/lint_bench.py [--models 200] [--repeat 5]

Times each run in-process (load + render + parse + rules) and as a CLI subprocess (wall time,
including interpreter start-up and imports; also its CPU time, which another process's load
inflates less), checks that no JVM-side module was imported, and writes bench/results/lint.md
with the machine, the load average, the numbers and the date.

The subprocesses run this checkout's ``runner`` package (PYTHONPATH points at it), not whatever
the venv's editable install points at, so a git worktree measures its own code. Compiled
templates are kept in a template cache of the bench's own (RUNNER_TEMPLATE_CACHE), empty at the
start: the first CLI run of each project, which fills it, is reported apart from the others.
The CLI is timed twice: computing every finding (``--no-cache``: what any edit to the project
costs) and answered from the lint result cache (RUNNER_LINT_CACHE, the bench's own: an
unchanged project, as a second ``runner lint`` or a pre-commit hook on an unrelated commit).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import sqlglot

import runner
from runner.artifacts import write_compiled
from runner.lint import lint_project
from runner.project import load

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "lint.md"
RUNNER = Path(sys.executable).with_name("runner")
# this checkout first on the path of every subprocess, so `runner` runs the code measured here
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
}

SCHEMA = (
    "order_id STRING, customer_id STRING, status STRING, amount DECIMAL(10,2), "
    "updated_at TIMESTAMP, op STRING"
)

# Three shapes, cycled: dedupe + MERGE + OPTIMIZE; hand-written ROW_NUMBER view + MERGE;
# a downstream model reading the previous model's Change Data Feed.
UPSERT = """{{{{ config(stream='orders', target='silver.t{n}', unique_key='order_id',
          sequence_by='updated_at', optimize_every={every}, zorder_by=['customer_id'],
          table_properties={{'delta.enableChangeDataFeed': 'true'}}) }}}}

-- latest event per order
CREATE OR REPLACE TEMPORARY VIEW latest_{n} AS
{{{{ dedupe(batch, key='order_id', order_by='updated_at DESC') }}}};

MERGE INTO {{{{ this }}}} AS t
USING latest_{n} AS s
ON t.order_id = s.order_id
WHEN MATCHED AND s.updated_at > t.updated_at AND s.op = 'D' THEN DELETE
WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET *
WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT *;
"""
RANKED = """{{{{ config(stream='orders', target='silver.t{n}', unique_key=['order_id', 'status'],
          table_properties={{'delta.enableChangeDataFeed': 'true'}}) }}}}

CREATE OR REPLACE TEMPORARY VIEW ranked_{n} AS
WITH numbered AS (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id, status ORDER BY updated_at DESC) AS rn
  FROM {{{{ batch }}}}
)
SELECT order_id, status, amount, updated_at FROM numbered WHERE rn = 1;

MERGE INTO {{{{ this }}}} AS t
USING ranked_{n} AS s
ON t.order_id = s.order_id AND t.status = s.status
WHEN MATCHED THEN UPDATE SET t.amount = s.amount, t.updated_at = s.updated_at
WHEN NOT MATCHED THEN INSERT (order_id, status, amount, updated_at)
  VALUES (s.order_id, s.status, s.amount, s.updated_at);
"""
CHANGES = """{{{{ config(stream='orders', target='gold.t{n}', unique_key='customer_id',
          columns='customer_id STRING, total DECIMAL(12,2)') }}}}

CREATE OR REPLACE TEMPORARY VIEW totals_{n} AS
SELECT customer_id, sum(amount) AS total
FROM table_changes('{{{{ ref("m{prev:03d}") }}}}', 0)
WHERE _change_type IN ('insert', 'update_postimage')
GROUP BY customer_id;

MERGE INTO {{{{ this }}}} AS t
USING totals_{n} AS s
ON t.customer_id = s.customer_id
WHEN MATCHED THEN UPDATE SET t.total = t.total + s.total
WHEN NOT MATCHED THEN INSERT (customer_id, total) VALUES (s.customer_id, s.total);
"""


def generate_project(root: Path, count: int) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "streams").mkdir()
    (root / "project.yml").write_text(
        "name: lint_bench\ndefault_target: local\ntargets:\n  local:\n"
        "    warehouse: target/local/warehouse\n    checkpoints: target/local/checkpoints\n"
    )
    (root / "streams" / "orders.yml").write_text(
        f'streams:\n  orders:\n    format: json\n    path: landing/orders\n    schema: "{SCHEMA}"\n'
    )
    for n in range(count):
        shape = (UPSERT, RANKED, CHANGES)[n % 3]
        sql = shape.format(n=n, every=2 + n % 5, prev=n - 1)
        (root / "models" / f"m{n:03d}.sql").write_text(sql)
    return root


def time_in_process(root: Path, repeat: int) -> tuple[list[float], int, int]:
    times, findings, statements = [], 0, 0
    for _ in range(repeat):
        started = time.perf_counter()
        result = lint_project(root)
        times.append(time.perf_counter() - started)
        findings, statements = len(result.violations), result.statements
    return times, findings, statements


def time_compile(root: Path, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        write_compiled(load(root))
        times.append(time.perf_counter() - started)
    return times


def time_cli(args: list[str], repeat: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) seconds of each ``runner <args>`` subprocess."""
    times, cpu = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([str(RUNNER), *args], capture_output=True, text=True, env=ENV)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            raise SystemExit(f"runner {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return times, cpu


def runner_package() -> str:
    """Where the CLI subprocesses import ``runner`` from (must be this checkout)."""
    code = "import runner; print(runner.__file__)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=ENV
    )
    for found in (Path(done.stdout.strip()), Path(runner.__file__)):
        if not found.is_relative_to(REPO):
            raise SystemExit(
                f"runner is imported from {found}, not from {REPO}: run with PYTHONPATH={REPO}"
            )
    return "runner/ of this checkout"


def runner_bytecode_compiled() -> bool:
    """Every module of runner/ has compiled bytecode newer than its source, as
    scripts/bootstrap.sh leaves it (without it, and with PYTHONDONTWRITEBYTECODE set, every CLI
    start compiles the package again)."""
    for source in (REPO / "runner").rglob("*.py"):
        compiled = Path(importlib.util.cache_from_source(str(source)))
        if not compiled.exists() or compiled.stat().st_mtime < source.stat().st_mtime:
            return False
    return True


def no_jvm_modules(root: Path) -> bool:
    code = (
        "import sys\nfrom runner.lint import lint_project\n"
        f"lint_project({str(root)!r})\n"
        "print(any(m.split('.')[0] in ('pyspark', 'py4j', 'delta') for m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=ENV
    )
    return done.stdout.strip() == "False"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, sqlglot {sqlglot.__version__}, "
        f"jinja2 {metadata.version('jinja2')}, typer {metadata.version('typer')}"
    )


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return f"load average: {_load()}"


def summary(times: list[float]) -> str:
    return (
        f"median {statistics.median(times) * 1000:.0f} ms "
        f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}, n={len(times)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    package = runner_package()
    compiled = runner_bytecode_compiled()
    load_before, uptime_before = _load(), uptime()
    with tempfile.TemporaryDirectory() as tmp:
        # a template cache of the bench's own, empty at first, for the CLI and in-process runs
        os.environ["RUNNER_TEMPLATE_CACHE"] = ENV["RUNNER_TEMPLATE_CACHE"] = str(
            Path(tmp) / "template-cache"
        )
        ENV["RUNNER_LINT_CACHE"] = str(Path(tmp) / "lint-cache")
        example = Path(tmp) / "example"
        example.mkdir()
        for item in ("project.yml", "models", "macros", "streams"):
            if (REPO / item).is_dir():
                shutil.copytree(REPO / item, example / item)
            else:
                shutil.copy2(REPO / item, example / item)
        generated = generate_project(Path(tmp) / "generated", args.models)

        ex_first, _ = time_cli(["lint", "-p", str(example)], 1)  # empty template cache
        ex_in, ex_findings, ex_statements = time_in_process(example, args.repeat)
        ex_cli, ex_cpu = time_cli(["lint", "-p", str(example), "--no-cache"], args.repeat)
        ex_hit, ex_hit_cpu = time_cli(["lint", "-p", str(example)], args.repeat)
        gen_first, _ = time_cli(["lint", "-p", str(generated)], 1)  # empty template cache
        gen_in, gen_findings, gen_statements = time_in_process(generated, args.repeat)
        gen_cli, gen_cpu = time_cli(["lint", "-p", str(generated), "--no-cache"], args.repeat)
        gen_hit, gen_hit_cpu = time_cli(["lint", "-p", str(generated)], args.repeat)
        gen_compile = time_compile(generated, args.repeat)
        ex_models = len(list((example / "models").glob("*.sql")))
        jvm_free = no_jvm_modules(example) and no_jvm_modules(generated)

    lines = [
        "# `runner lint` benchmark",
        "",
        f"- Date: {dt.date.today().isoformat()}",
        f"- Machine: {machine()}",
        f"- Command: `.venv/bin/python bench/lint_bench.py --models {args.models} "
        f"--repeat {args.repeat}`",
        f"- Code measured: {package} (in-process and in the CLI subprocesses, checked)",
        f"- No pyspark / py4j / delta module imported while linting: {jvm_free}",
        f"- runner/ compiled to bytecode (scripts/bootstrap.sh does it): {compiled}",
        f"- Load average before / after the run: {load_before} / {_load()} "
        "(other processes, e.g. Spark test JVMs, inflate the times)",
        f"- `uptime` before / after: `{uptime_before}` / `{uptime()}`",
        "",
        "In-process = `lint_project()` (load project, render every model for batch 0 and a",
        "maintenance batch, parse with the Delta dialect, run all rules). CLI = wall time of",
        "`runner lint -p <project>` as a subprocess, including interpreter start-up and imports;",
        "CLI CPU = that subprocess's user + system CPU time (with its forked child's). All run",
        "after a first CLI run of the project has filled the template cache; that first run is",
        "reported below the tables. *Computed*: `runner lint --no-cache`, every model rendered,",
        "parsed and checked (what the first lint after any edit costs: the result cache is kept",
        "per project, so one edited file computes every model again). *Unchanged*: `runner lint`",
        "answered from the lint result cache.",
        "",
        "| Project | Models | Statements linted | Findings | In-process | CLI wall, computed "
        "| CLI CPU, computed | CLI wall, unchanged | CLI CPU, unchanged |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        f"| example (repo root) | {ex_models} | {ex_statements} | {ex_findings} | "
        f"{summary(ex_in)} | {summary(ex_cli)} | {summary(ex_cpu)} | {summary(ex_hit)} "
        f"| {summary(ex_hit_cpu)} |",
        f"| generated | {args.models} | {gen_statements} | {gen_findings} | "
        f"{summary(gen_in)} | {summary(gen_cli)} | {summary(gen_cpu)} | {summary(gen_hit)} "
        f"| {summary(gen_hit_cpu)} |",
        "",
        "First CLI run, templates not yet compiled (empty template cache): "
        f"example {ex_first[0] * 1000:.0f} ms, generated {gen_first[0] * 1000:.0f} ms.",
        "",
        f"`runner compile` (in-process, {args.models} generated models, files and manifest "
        f"written): {summary(gen_compile)}.",
        "",
        f"Example project under 1 s wall as a CLI, computed: {max(ex_cli) < 1.0} "
        f"(slowest run {max(ex_cli) * 1000:.0f} ms).",
        f"{args.models} models under 1 s median wall as a CLI, unchanged (warm): "
        f"{statistics.median(gen_hit) < 1.0} (median {statistics.median(gen_hit) * 1000:.0f} ms).",
        f"{args.models} models under 1 s median wall as a CLI, computed: "
        f"{statistics.median(gen_cli) < 1.0} (median {statistics.median(gen_cli) * 1000:.0f} ms).",
        "",
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
