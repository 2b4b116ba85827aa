"""Sharing lint's work with a forked child: the same result as doing it all here, whatever
happens to the child. No JVM.

The forking tests run in a fresh interpreter: a test worker of the full suite also holds the
suite's SparkSession, whose py4j threads rightly stop ``in_two_processes`` from forking there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from runner.lint.two_processes import can_fork, in_two_processes

REPO = Path(__file__).resolve().parents[2]
forks = pytest.mark.skipif(
    not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2, reason="cannot fork here"
)


def in_fresh_interpreter(code: str, *args: str) -> dict:
    """Run ``code`` in a new Python process (only its main thread) and return the JSON it
    printed last."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def _squares_and_pid(items: list[int]) -> tuple[list[int], int]:
    return [n * n for n in items], os.getpid()


@forks
def test_the_child_does_every_other_item() -> None:
    found = in_fresh_interpreter(
        """
        import json, os
        from runner.lint.two_processes import in_two_processes

        def squares_and_pid(items):
            return [n * n for n in items], os.getpid()

        (here, here_pid), (there, there_pid) = in_two_processes(squares_and_pid, list(range(9)), 2)
        pids = [os.getpid(), here_pid, there_pid]
        print(json.dumps({"here": here, "there": there, "pids": pids}))
        """
    )
    assert sorted(found["here"] + found["there"]) == [n * n for n in range(9)]
    assert found["here"] == [n * n for n in range(0, 9, 2)]
    me, here_pid, there_pid = found["pids"]
    assert here_pid == me != there_pid


@forks
def test_a_failing_child_leaves_its_share_to_this_process() -> None:
    found = in_fresh_interpreter(
        """
        import json, os
        from runner.lint.two_processes import in_two_processes

        parent = os.getpid()

        def fails_in_the_child(items):
            if os.getpid() != parent:
                raise RuntimeError("child")
            return items

        print(json.dumps(in_two_processes(fails_in_the_child, list(range(10)), 2)))
        """
    )
    assert found == [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]]


def test_no_fork_for_few_items_or_beside_other_threads() -> None:
    assert in_two_processes(_squares_and_pid, [1, 2], 8) == [([1, 4], os.getpid())]
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not can_fork(100)
    finally:
        stop.set()
        thread.join()


@forks
def test_lint_finds_the_same_in_one_process_and_in_two(project_factory) -> None:
    header = "{{{{ config(stream='orders', target='silver.t{n}', unique_key='order_id') }}}}\n"
    models = {
        f"m{n:02d}": header.format(n=n)
        + ("MERGE INTO {{ this }} t USING {{ batch }} s ON t.x = s.x WHEN MATCHED THEN DELETE;")
        if n % 2
        else header.format(n=n) + "SELECT * FROM {{ batch }};\nSELECT {{ ghost }};"
        for n in range(12)
    }
    root = project_factory(models)
    found = in_fresh_interpreter(
        """
        import json, sys
        from runner.lint import lint_project, two_processes

        forked = two_processes.can_fork(12)
        split = lint_project(sys.argv[1])
        two_processes.MIN_ITEMS = 10_000
        whole = lint_project(sys.argv[1])
        print(json.dumps({
            "forked": forked,
            "violations": len(split.violations),
            "same": (split.violations, split.statements) == (whole.violations, whole.statements),
        }))
        """,
        str(root),
    )
    assert found["forked"]
    assert found["violations"] > 12
    assert found["same"]
