"""`runner` as a separate process, the way operators run it."""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

RUNNER = str(Path(sys.executable).parent / "runner")


class StreamProcess:
    """`runner stream` in its own process group, its output read line by line. One a test
    leaves running (it failed before stopping it) is killed when the test ends
    (``kill_leftovers``, called by tests/conftest.py)."""

    _started: list[StreamProcess] = []

    def __init__(
        self, project: Path, select: str = "orders_merge+", command: list[str] | None = None
    ) -> None:
        """``command``: other arguments than `stream --select SELECT --verbose` (e.g.
        ``["backfill", "-m", "orders_merge"]``)."""
        self.lines: list[str] = []
        arguments = command or ["stream", "--select", select, "--verbose"]
        self.process = subprocess.Popen(
            [RUNNER, *arguments, "-p", str(project)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env={**os.environ, "COLUMNS": "200"},
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        StreamProcess._started.append(self)

    @classmethod
    def kill_leftovers(cls) -> list[int]:
        """SIGKILL the process group of every stream started since the last call that still
        runs; their PIDs."""
        left = [stream for stream in cls._started if stream.process.poll() is None]
        cls._started = []
        for stream in left:
            stream.kill()
        return [stream.process.pid for stream in left]

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: re.Pattern[str], start: int, timeout: float) -> int | None:
        """Index of the first line from ``start`` on matching ``pattern``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for index in range(start, len(self.lines)):
                if pattern.search(self.lines[index]):
                    return index
            if self.process.poll() is not None:
                return None
            time.sleep(0.02)
        return None

    def join(self) -> None:
        """Wait until the output of a process that has exited is read to the end."""
        self._reader.join(timeout=10)

    def kill(self) -> None:
        """SIGKILL the runner and its JVM together: a machine that loses power. A runner that
        has already exited is left as it is: its exit code and output say why."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self._reader.join(timeout=10)


def kill_repeatedly(
    project: Path, select: str, model: str, kills: int, rng: random.Random
) -> list[str]:
    """Start `runner stream --select SELECT` and SIGKILL it ``kills`` times: every other time
    right after ``model`` finished the first statement of a batch (so its MERGE is in flight),
    the others at a random moment after a batch. Returns where each kill landed."""
    after_first_statement = re.compile(rf"{model} batch \d+ batch\[0\] CREATE")
    any_batch = re.compile(r"batch \d+: \d+ rows in")
    report = []
    for cycle in range(kills):
        stream = StreamProcess(project, select=select)
        if cycle % 2 == 0:
            hit = stream.wait_for(after_first_statement, 0, timeout=180)
            where = stream.lines[hit] if hit is not None else "(no batch started)"
            stream.kill()
            report.append(f"kill {cycle + 1}: between statements, right after: {where.strip()}")
        else:
            stream.wait_for(any_batch, 0, timeout=180)
            time.sleep(rng.uniform(0.2, 3.0))
            stream.kill()
            last = next((ln for ln in reversed(stream.lines) if "batch" in ln), "(none)")
            report.append(f"kill {cycle + 1}: at a random moment, last output: {last.strip()}")
        assert stream.process.returncode == -signal.SIGKILL, "\n".join(stream.lines)
    return report
