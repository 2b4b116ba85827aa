"""Long-running helper processes the runner starts (Kafka broker, Spark master, workers,
Spark Connect server): free loopback ports, liveness, stopping by PID. No pyspark."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from runner.errors import RunnerError

# Extra flags for every Spark JVM the runner starts (drivers, executors, cluster daemons, the
# Connect server), e.g. "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC": short-lived JVMs on
# small data spend most of their CPU compiling and collecting. The test suite sets it.
JVM_OPTIONS_ENV = "RUNNER_JVM_OPTIONS"
START_TIMEOUT_SECONDS = 120.0
PORT_FREE_TIMEOUT_SECONDS = 15.0


def extra_jvm_options() -> str:
    """The flags in $RUNNER_JVM_OPTIONS, or ''."""
    return os.environ.get(JVM_OPTIONS_ENV, "").strip()


def with_extra_jvm_options(options: str) -> str:
    """``options`` (a JVM options string) followed by $RUNNER_JVM_OPTIONS."""
    return " ".join(filter(None, [options.strip(), extra_jvm_options()]))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def accepts_connections(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def wait_port_free(port: int, timeout: float, host: str = "127.0.0.1") -> bool:
    """Wait until nothing accepts connections on ``port`` (a process that was just killed can
    keep its listening socket for a moment while it exits). False if it stays taken."""
    deadline = time.monotonic() + timeout
    while accepts_connections(port, host):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
    return True


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not yet reaped by its parent) is not a running process.
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    return True


def wait_exit(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reap it when it is our child
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


def terminate(pid: int, timeout: float) -> None:
    """SIGTERM ``pid``; SIGKILL it when it has not exited after ``timeout`` seconds. Then
    SIGKILL what is left of its process group (``pid`` leads one when it was started with
    ``start_new_session``): a Spark Connect server's Python workers outlive it otherwise."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if not wait_exit(pid, timeout):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        wait_exit(pid, 10.0)
    kill_group(pid)


def kill_group(pgid: int) -> None:
    """SIGKILL every process of process group ``pgid``, if it is one."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux: read from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
    return found


def kill_children(pid: int) -> None:
    """SIGKILL each child of ``pid`` (a local Spark driver's JVM, which would otherwise go on
    with what it was doing for a moment after its Python process ends)."""
    for child in children(pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGKILL)


def die_with_parent() -> None:
    """In the child before exec: ask Linux to SIGTERM it when its parent dies."""
    with contextlib.suppress(Exception):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


class ProcessStartError(RunnerError):
    """A helper process (a Spark daemon, a Connect server) did not start."""


def launch(
    command: list[str],
    *,
    what: str,
    log: Path,
    pid_file: Path,
    env: dict[str, str],
    ready: Callable[[], bool],
    port: int | None = None,
    timeout: float = START_TIMEOUT_SECONDS,
    tied: bool = False,
    run_as: tuple[int, int] | None = None,
) -> int:
    """Start ``command`` in its own session (Ctrl-C in the terminal does not reach it), its
    output appended to ``log`` and its PID written to ``pid_file``, and wait until ``ready()``.
    Returns the PID. With ``port``, the port must be free first: a server killed a moment ago
    can still accept on it while it exits, and this one would seem ready before it listens.
    ``tied``: it gets SIGTERM when this process dies (tests). ``run_as``: (uid, gid) to run
    it as, without this process's supplementary groups (a server that refuses root)."""
    if port is not None and not wait_port_free(port, PORT_FREE_TIMEOUT_SECONDS):
        raise ProcessStartError(
            f"cannot start the {what}: port {port} on 127.0.0.1 is in use",
            hint="stop what listens there, or pick another port (0 picks a free one)",
        )
    with log.open("ab") as out:
        process = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=log.parent,
            env=env,
            start_new_session=True,
            preexec_fn=die_with_parent if tied else None,
            user=run_as[0] if run_as else None,
            group=run_as[1] if run_as else None,
            extra_groups=[] if run_as else None,
        )
    # spark-class and spark-submit end in `exec java ...`: this pid is the JVM's.
    pid_file.write_text(f"{process.pid}\n")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pid_file.unlink(missing_ok=True)
            raise ProcessStartError(
                f"the {what} exited with code {process.returncode} while starting (log: {log})",
                detail=log_tail(log),
            )
        if ready():
            return process.pid
        time.sleep(0.25)
    raise ProcessStartError(
        f"the {what} did not become ready within {timeout:.0f} s (log: {log})",
        detail=log_tail(log),
        hint=f"it is still starting or stuck: look at the log, then stop it (pid {process.pid})",
    )


def log_tail(log: Path, lines: int = 15) -> str:
    """A log's errors and last lines, for an error message."""
    text = log.read_text(errors="replace").splitlines() if log.exists() else []
    errors = [line for line in text if " ERROR " in line or "Exception" in line][:8]
    return "\n".join([*errors, "last lines of the log:", *text[-lines:]])


def read_pid(pid_file: Path) -> int | None:
    """The PID in ``pid_file`` when that process is alive; None otherwise."""
    pid = recorded_pid(pid_file)
    return pid if pid is not None and alive(pid) else None


def recorded_pid(pid_file: Path) -> int | None:
    """The PID written in ``pid_file``, alive or not; None when there is none."""
    try:
        return int(pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
