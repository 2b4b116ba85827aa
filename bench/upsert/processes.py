"""Run one bench step as a child process: its wall time, its output (echoed with a prefix and
kept in a log), and the peak memory of its process tree.

Peak memory is the largest sum of resident memory (RSS) over the child and all its
descendants, sampled from /proc: the Spark JVM is a child of the Python process, and the
Python workers Spark starts for UDFs are children of the JVM. Pages shared between processes
are counted in each, so the sum is an upper bound.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
SAMPLE_SECONDS = 0.25


def parent_pids() -> dict[int, int]:
    """pid -> parent pid of every process now in /proc."""
    parents = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                # "pid (comm) state ppid ...": comm may hold spaces and parentheses
                fields = stat.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue  # ended while we looked
        parents[int(entry.name)] = int(fields[1])
    return parents


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants."""
    children: dict[int, list[int]] = {}
    for pid, parent in parent_pids().items():
        children.setdefault(parent, []).append(pid)
    tree, pending = [], [root]
    while pending:
        pid = pending.pop()
        tree.append(pid)
        pending.extend(children.get(pid, []))
    return tree


def rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * PAGE_SIZE
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return 0


def process_cpu_seconds(pid: int | None) -> float:
    """User + system CPU of process ``pid`` (every thread of a JVM) so far; 0 without one."""
    if pid is None:
        return 0.0
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_rss_bytes(root: int) -> int:
    """Resident memory of ``root`` and its descendants, now."""
    return sum(rss_bytes(pid) for pid in process_tree(root))


class PeakMemory:
    """Samples the process tree of ``pid`` in a thread until ``stop()``; ``peak`` in bytes."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True, name="peak-memory")
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, tree_rss_bytes(self.pid))
            self._done.wait(SAMPLE_SECONDS)

    def stop(self) -> int:
        self._done.set()
        self._thread.join()
        return self.peak


@dataclass(frozen=True)
class StepRun:
    started: float  # epoch seconds
    wall: float  # seconds from start to exit, JVM start and stop included
    peak_rss: int  # bytes
    log: Path


class StepFailed(Exception):
    pass


def run_step(
    label: str,
    command: Sequence[str],
    *,
    log: Path,
    env: dict[str, str],
    cwd: Path,
    on_start: Callable[[subprocess.Popen[str]], None] | None = None,
) -> StepRun:
    """Run ``command``, echo its output as ``  [label] line``, fail loudly on a non-zero exit.
    The child leads its own process group, so an interrupt of the bench ends its JVM too.
    ``on_start`` is given the child as soon as it runs (to signal it: a stream runs until
    stopped)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    started_at, started = time.time(), time.monotonic()
    with log.open("w") as out:
        child = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        memory = PeakMemory(child.pid)
        if on_start is not None:
            on_start(child)
        try:
            assert child.stdout is not None
            for line in child.stdout:
                out.write(line)
                print(f"  [{label}] {line.rstrip()}", flush=True)
            code = child.wait()
        except BaseException:
            os.killpg(child.pid, signal.SIGTERM)
            child.wait()
            raise
        finally:
            peak = memory.stop()
    wall = time.monotonic() - started
    if code != 0:
        raise StepFailed(f"{label} exited with {code} after {wall:.0f}s; its output: {log}")
    return StepRun(started_at, wall, peak, log)


def commit() -> str:
    """The checkout's commit, short, with "+changes" when tracked files differ from it."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def load_average() -> str:
    """/proc/loadavg's 1, 5 and 15 minute figures."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def say(text: str) -> None:
    print(text, flush=True)


@dataclass
class Steps:
    """Runs the bench's steps as child processes, numbering them as they go."""

    work: Path
    env: dict[str, str]
    cwd: Path
    count: int = 0

    def run(
        self,
        label: str,
        command: list[str],
        on_start: Callable[[subprocess.Popen[str]], None] | None = None,
    ) -> StepRun:
        self.count += 1
        say(f"==> step {self.count}, {label}: {' '.join(command)}")
        step = run_step(
            label,
            command,
            log=self.work / "logs" / f"{label}.log",
            env=self.env,
            cwd=self.cwd,
            on_start=on_start,
        )
        say(f"==> {label}: {step.wall:.1f}s, peak memory {step.peak_rss / (1 << 20):.0f} MiB")
        return step

    def module(self, label: str, module: str, *args: str | Path) -> StepRun:
        return self.run(label, [sys.executable, "-m", module, *map(str, args)])
