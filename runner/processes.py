"""Long-running helper processes the runner starts (Kafka broker, Spark master, workers,
Spark Connect server): free loopback ports, liveness, stopping by PID. No pyspark."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from pathlib import Path

# Extra flags for every Spark JVM the runner starts (drivers, executors, cluster daemons, the
# Connect server), e.g. "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC": short-lived JVMs on
# small data spend most of their CPU compiling and collecting. The test suite sets it.
JVM_OPTIONS_ENV = "RUNNER_JVM_OPTIONS"


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


def die_with_parent() -> None:
    """In the child before exec: ask Linux to SIGTERM it when its parent dies."""
    with contextlib.suppress(Exception):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
