"""The local object store's own command line: start, status, stop by PID, as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from runner.processes import alive
from runner.s3_client import s3_client
from runner_devtools.object_store import LocalObjectStore


def store_command(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runner_devtools.object_store", *args, "--dir", str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_start_status_stop(tmp_path: Path) -> None:
    started = store_command(tmp_path, "start", "--bucket", "lake")
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        store = LocalObjectStore(tmp_path)
        pid = store.pid()
        assert pid is not None and store.endpoint is not None
        assert f"spark.hadoop.fs.s3a.endpoint: {store.endpoint}" in started.stdout
        client = s3_client(store.settings)
        assert [b["Name"] for b in client.list_buckets()["Buckets"]] == ["lake"]
        status = store_command(tmp_path, "status")
        assert status.returncode == 0 and f"pid {pid}" in status.stdout
        again = store_command(tmp_path, "start")
        assert again.returncode == 1 and "already runs" in again.stderr
    finally:
        stopped = store_command(tmp_path, "stop")
    assert "object store stopped" in stopped.stdout
    assert not alive(pid)
    assert store_command(tmp_path, "status").returncode == 1
