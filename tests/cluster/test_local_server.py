"""`runner server start`, then commands on the example's local target through it, then `runner
server stop`: the fast inner loop of docs/inner-loop.md. Real processes: the server is a JVM
of its own, each `runner` a separate process; nothing is left running."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from runner.processes import alive
from tests.cluster.conftest import RUNNER, runner
from tests.spark.test_orders_pipeline import land_sample

USING = re.compile(r"^using the local server (sc://127\.0\.0\.1:\d+) \(runner server stop", re.M)


def cells(stdout: str) -> list[list[str]]:
    """The rows of a rich table as lists of cell texts."""
    return [
        [cell.strip() for cell in line.strip("│").split("│")]
        for line in stdout.splitlines()
        if line.startswith("│")
    ]


def test_show_and_run_go_through_the_local_server(example_project: Path) -> None:
    land_sample(example_project, ["001.json"])
    started = runner(example_project, "server", "start")
    state_file = example_project / "target" / "server" / "server.json"
    state = json.loads(state_file.read_text())
    pid = state["pid"]
    try:
        assert alive(pid)
        assert f"{state['address']}, pid {pid}" in started.stdout
        assert state["warehouse"] == str(example_project / "target" / "local" / "warehouse")

        ran = runner(example_project, "run", "--select", "orders_merge")
        assert USING.search(ran.stderr), ran.stderr
        assert "orders_merge batch 0: 5 rows in; inserted 3" in ran.stdout

        shown = runner(example_project, "show", "--model", "orders_merge")
        used = USING.search(shown.stderr)
        assert used is not None and used.group(1) == state["address"], shown.stderr
        assert "silver.orders (3 rows)" in shown.stdout
        assert cells(shown.stdout) == [
            ["o1", "c1", "paid", "10.00", "2024-01-01 10:05:00"],
            ["o2", "c2", "created", "25.50", "2024-01-01 10:01:00"],
            ["o3", "c1", "created", "7.25", "2024-01-01 10:02:00"],
        ]
        # the same table in the same warehouse: the checkpoint is where in-process runs keep it
        commits = example_project / "target" / "local" / "checkpoints" / "orders_merge" / "commits"
        assert (commits / "0").exists()
        assert "running, pid" in runner(example_project, "server", "status").stdout
    finally:
        stopped = runner(example_project, "server", "stop")
    assert f"stopped the local server (pid {pid})" in stopped.stdout
    assert not alive(pid)
    assert not state_file.exists()
    status = subprocess.run(
        [RUNNER, "server", "status", "-p", str(example_project)], capture_output=True, text=True
    )
    assert status.returncode == 1 and "no local server" in status.stdout
