"""How long a Connect server's foreachBatch Python worker takes to connect back, with Spark's
``pyspark.zip`` first on its PYTHONPATH (as Spark starts it from the installed pyspark's home)
and with the runner's linked Spark home (``spark_home_linked``: no zip, the installed pyspark
and its bytecode).

    .venv/bin/python bench/python_worker_start_bench.py [--repeat 5]

Does what ``PythonWorkerFactory.createSimpleWorker`` does: listens on a loopback port, starts
``python -m pyspark.sql.connect.streaming.worker.foreach_batch_worker`` with
PYTHON_WORKER_FACTORY_PORT and the PYTHONPATH Spark gives it (PythonUtils.sparkPythonPath:
$SPARK_HOME/python/lib/pyspark.zip and py4j's zip), and times until the worker connects, which
Spark allows 10 s. Writes bench/results/python_worker_start.md with the load average.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runner.spark.session.local_server import spark_home, spark_home_linked

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "python_worker_start.md"
WORKER = "pyspark.sql.connect.streaming.worker.foreach_batch_worker"
SPARK_ZIPS = ["pyspark.zip", *(p.name for p in (spark_home() / "python" / "lib").glob("py4j-*"))]
SPARK_LIMIT_SECONDS = 10.0  # PythonWorkerFactory.createSimpleWorker's accept timeout


def connect_back_seconds(home: Path) -> float:
    """Seconds from the worker's start to its connection, as Spark starts it from ``home``."""
    lib = home / "python" / "lib"
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(120)
        env = {
            **os.environ,
            "SPARK_HOME": str(home),
            # the same two paths whether they exist or not, as Spark does
            "PYTHONPATH": os.pathsep.join(str(lib / name) for name in SPARK_ZIPS),
            "PYTHONUNBUFFERED": "YES",
            "PYTHON_WORKER_FACTORY_PORT": str(server.getsockname()[1]),
            "PYTHON_WORKER_FACTORY_SECRET": "bench",
        }
        started = time.perf_counter()
        worker = subprocess.Popen(
            [sys.executable, "-m", WORKER],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            connection, _ = server.accept()
            seconds = time.perf_counter() - started
            connection.close()  # the worker fails its handshake and exits
        finally:
            worker.kill()
            worker.wait()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        homes = {"pyspark.zip (Spark's default)": spark_home(),
                 "installed pyspark (linked home)": spark_home_linked(Path(tmp))}  # fmt: skip
        times: dict[str, list[float]] = {name: [] for name in homes}
        loads = []
        for _ in range(args.repeat):  # alternate, so both see the same load
            for name, home in homes.items():
                loads.append(os.getloadavg()[0])
                times[name].append(connect_back_seconds(home))
    rows = [
        f"| {name} | {statistics.median(t):.1f} | {min(t):.1f} | {max(t):.1f} | "
        f"{sum(x > SPARK_LIMIT_SECONDS for x in t)}/{len(t)} |"
        for name, t in times.items()
    ]
    text = "\n".join(
        [
            "# A foreachBatch Python worker's start (seconds until it connects back)",
            "",
            f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, load "
            f"average {min(loads):.1f}-{max(loads):.1f} (the machine shared with other work), "
            f"{args.repeat} runs each, alternating. Command: "
            "`.venv/bin/python bench/python_worker_start_bench.py`.",
            "",
            f"| pyspark from | median | min | max | over Spark's {SPARK_LIMIT_SECONDS:.0f} s |",
            "| --- | --- | --- | --- | --- |",
            *rows,
            "",
        ]
    )
    RESULTS.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
