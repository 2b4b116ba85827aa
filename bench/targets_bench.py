"""Benchmark the example pipeline on each kind of target, in one run: local[*], a standalone
cluster using 1 and then 2 workers, and Spark Connect.

    .venv/bin/python bench/targets_bench.py

Starts one local cluster (`runner_devtools.local_cluster`: a master, two 1-core workers, a
Connect server, on free loopback ports), then for each target runs
`runner run --select orders_merge+` on a fresh copy of the example with its four sample files,
and reads the per-batch seconds from the event log (`runner history --format json`). Writes
bench/results/targets.md, then stops the cluster.
"""

from __future__ import annotations

import datetime as dt
import json
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

from runner_devtools.local_cluster import LocalCluster  # noqa: E402

RESULTS = REPO / "bench" / "results" / "targets.md"
RUNNER = Path(sys.executable).with_name("runner")
SAMPLES = sorted((REPO / "sample_data" / "orders").glob("*.json"))
TARGETS = {
    "local": "master: local[2]",
    "standalone_1_worker": "master: {master}",
    "standalone_2_workers": "master: {master}",
    "connect": "remote: {connect}",
}
EXTRA_CONF = {
    "standalone_1_worker": "      spark.cores.max: 1\n      spark.executor.cores: 1\n"
    "      spark.executor.memory: 512m\n",
    "standalone_2_workers": "      spark.cores.max: 2\n      spark.executor.cores: 1\n"
    "      spark.executor.memory: 512m\n",
}


def project_for(root: Path, name: str, cluster: LocalCluster) -> Path:
    project = root / name
    project.mkdir()
    for item in ("models", "macros", "streams", "seeds"):
        shutil.copytree(REPO / item, project / item)
    endpoint = TARGETS[name].format(master=cluster.master_url, connect=cluster.connect_url)
    (project / "project.yml").write_text(
        "name: orders_demo\nvars:\n  delete_op: D\n"
        f"default_target: {name}\ntargets:\n  {name}:\n    {endpoint}\n"
        "    spark_conf:\n      spark.sql.shuffle.partitions: 2\n" + EXTRA_CONF.get(name, "")
    )
    landing = project / "target" / "landing" / "orders"
    landing.mkdir(parents=True)
    for number, sample in enumerate(SAMPLES):
        shutil.copy2(sample, landing / sample.name)
        stamp = time.time() - 100 + number
        os.utime(landing / sample.name, (stamp, stamp))
    return project


def run(project: Path, *args: str) -> str:
    result = subprocess.run(
        [str(RUNNER), *args, "-p", str(project)], capture_output=True, text=True, timeout=900
    )
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def measure(project: Path) -> dict[str, float]:
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    run(project, "run", "--select", "orders_merge+")
    wall = time.monotonic() - started
    batches = json.loads(run(project, "history", "-m", "orders_merge", "--format", "json"))
    seconds = [float(b["seconds"]) for b in batches]
    return {
        "wall": wall,
        "first": seconds[0],
        "median_rest": statistics.median(seconds[1:]),
        "load": (load_before + os.getloadavg()[0]) / 2,
    }


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="runner-targets-bench-"))
    cluster = LocalCluster(root / "cluster")
    started = time.monotonic()
    cluster.start(workers=2, worker_cores=1, worker_memory="1g", master_port=0, connect_port=0)
    startup = time.monotonic() - started
    results = {}
    try:
        for name in TARGETS:
            results[name] = measure(project_for(root, name, cluster))
            print(name, {k: round(v, 2) for k, v in results[name].items()}, flush=True)
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
    write_results(results, startup)


def write_results(results: dict[str, dict[str, float]], startup: float) -> None:
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# The example pipeline per target",
        "",
        f"`.venv/bin/python bench/targets_bench.py`, {when}, {os.cpu_count()} CPUs. "
        "`runner run --select orders_merge+` over the four sample files (4 batches of "
        "orders_merge, 1 of customer_totals); batch seconds from the event log.",
        "",
        f"Local cluster start-up (master, 2 workers of 1 core, Connect server): {startup:.0f} s.",
        "",
        "| target | wall of `runner run` (s) | orders_merge batch 0 (s) "
        "| later batches, median (s) | load average |",
        "|---|---|---|---|---|",
    ]
    for name, r in results.items():
        lines.append(
            f"| {name} | {r['wall']:.1f} | {r['first']:.1f} | {r['median_rest']:.1f} "
            f"| {r['load']:.1f} |"
        )
    lines += ["", *NOTES]
    RESULTS.write_text("\n".join(lines) + "\n")
    print(RESULTS.read_text())


NOTES = [
    "Where the time goes:",
    "",
    "- **local**: driver and executors in one JVM; the runner's start includes the JVM.",
    "- **standalone**: the runner is the driver; the master starts executor JVMs on the workers",
    "  (a few seconds each, plus their JIT warm-up in the first batch), the Delta jars are",
    "  fetched by every executor from the driver, and every task and shuffle crosses processes.",
    "  A second worker adds parallelism that a 5-row batch cannot use: on two cores it mostly",
    "  adds one more JVM competing for them.",
    "- **connect**: the server is already warm (its JVM and catalog outlive the client), but",
    "  every statement is a gRPC round trip, each batch runs in a Python worker on the server,",
    "  and the client learns progress by reading the event log (one more Delta read per batch).",
    "",
]


if __name__ == "__main__":
    main()
