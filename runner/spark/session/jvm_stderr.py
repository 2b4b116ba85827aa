"""Java's ``WARNING: Using incubator modules: jdk.incubator.vector``, dropped.

Spark's launcher always starts the JVM with ``--add-modules=jdk.incubator.vector`` and Java
prints that line on stderr as it starts, whatever its options say; it tells a user of the
runner nothing. The JVM inherits the process's stderr (file descriptor 2) when pyspark starts
it, so for that moment descriptor 2 is a pipe: a thread copies what comes through it to the
real stderr, line by line, without that line, for as long as the JVM lives (its log4j
warnings and errors still show).

Python's own ``sys.stderr`` keeps writing to the real stderr meanwhile: a line printed by
another thread just before the process ends at once (a lost lease's ``os._exit``, while a
slow JVM is still starting) would otherwise sit in the pipe and never be shown.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

INCUBATOR_WARNING = b"WARNING: Using incubator modules: jdk.incubator.vector"


@contextmanager
def without_incubator_warning() -> Iterator[None]:
    """Processes started inside inherit a stderr without Java's incubator warning."""
    try:
        sys.stderr.flush()
        real = os.dup(2)
    except (OSError, ValueError):  # no descriptor 2 (a closed stderr): nothing to filter
        yield
        return
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)
    threading.Thread(
        target=copy_lines, args=(read_end, real), name="jvm-stderr", daemon=True
    ).start()
    python_stderr = sys.stderr
    if _writes_to_descriptor_2(python_stderr):
        sys.stderr = open(  # noqa: SIM115 (left to the garbage collector: a thread may write)
            os.dup(real), "w", buffering=1, encoding=python_stderr.encoding, errors="replace"
        )
    try:
        yield
    finally:
        sys.stderr.flush()
        sys.stderr = python_stderr
        os.dup2(real, 2)  # this process writes to the real stderr again; the JVM keeps the pipe


def _writes_to_descriptor_2(stream: object) -> bool:
    """``stream`` is a file on descriptor 2 (not a capture, such as a test runner's)."""
    try:
        return stream.fileno() == 2  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False


def copy_lines(source: int, target: int, dropped: bytes = INCUBATOR_WARNING) -> None:
    """Copy ``source`` to ``target`` until end of file, leaving out lines that start with
    ``dropped``; then close both."""
    pending = b""
    try:
        while chunk := os.read(source, 65536):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            kept = [line for line in lines if not line.startswith(dropped)]
            if kept:
                os.write(target, b"".join(line + b"\n" for line in kept))
        if pending and not pending.startswith(dropped):
            os.write(target, pending)
    except OSError:
        pass  # the real stderr went away: nothing left to copy to
    finally:
        os.close(source)
        os.close(target)
