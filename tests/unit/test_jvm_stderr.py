"""Java's incubator warning is dropped from a started process's stderr; the rest passes.
A real child process (a shell, not a JVM) writes to the stderr it inherited."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from runner.spark.session.jvm_stderr import copy_lines, without_incubator_warning


def test_copy_lines_drops_only_the_warning() -> None:
    source_r, source_w = os.pipe()
    target_r, target_w = os.pipe()
    os.write(source_w, b"WARNING: Using incubator modules: jdk.incubator.vector\nkept 1\nkep")
    os.write(source_w, b"t 2\nlast line without newline")
    os.close(source_w)
    copy_lines(source_r, target_w)
    with os.fdopen(target_r, "rb") as read:
        assert read.read() == b"kept 1\nkept 2\nlast line without newline"


def test_a_child_started_inside_writes_without_the_warning(capfd: pytest.CaptureFixture) -> None:
    script = (
        "import sys, time; time.sleep(0.2)\n"  # writes after the context has ended
        "sys.stderr.write('WARNING: Using incubator modules: jdk.incubator.vector\\n')\n"
        "sys.stderr.write('WARN spark: a real warning\\n')"
    )
    with without_incubator_warning():
        child = subprocess.Popen([sys.executable, "-c", script])
    print("after", file=sys.stderr)
    child.wait()
    time.sleep(0.2)  # the copying thread forwards what the child wrote
    err = capfd.readouterr().err
    assert "a real warning" in err and "after" in err
    assert "incubator" not in err


def test_python_writes_to_the_real_stderr_while_a_child_starts() -> None:
    """A lost lease ends the process with ``os._exit`` at once, possibly while a slow JVM
    starts: its line must go to the real stderr, not into the pipe, whose copying thread may
    never run again (on busy cores it lost such a line)."""
    script = (
        "import os, sys\n"
        "from runner.spark.session.jvm_stderr import without_incubator_warning\n"
        "from runner.checkpoint_lease import stop_process\n"
        "real = os.fstat(2).st_ino\n"
        "with without_incubator_warning():\n"
        "    assert os.fstat(2).st_ino != real  # a child started here gets the pipe\n"
        "    assert os.fstat(sys.stderr.fileno()).st_ino == real, 'print goes into the pipe'\n"
        "    stop_process('the lease is gone')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.stderr == "error: the lease is gone\n"
    assert result.returncode == 1
