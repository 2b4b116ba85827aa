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
