"""Sharing lint's work with a forked child: the same result as doing it all here, whatever
happens to the child. No JVM."""

from __future__ import annotations

import os
import threading

import pytest

from runner.lint import lint_project, two_processes
from runner.lint.two_processes import can_fork, in_two_processes

forks = pytest.mark.skipif(not can_fork(2, min_items=2), reason="cannot fork here")


def _squares_and_pid(items: list[int]) -> tuple[list[int], int]:
    return [n * n for n in items], os.getpid()


@forks
def test_the_child_does_every_other_item() -> None:
    (here, here_pid), (there, there_pid) = in_two_processes(_squares_and_pid, list(range(9)), 2)
    assert sorted(here + there) == [n * n for n in range(9)]
    assert here == [n * n for n in range(0, 9, 2)]
    assert here_pid == os.getpid() != there_pid


@forks
def test_a_failing_child_leaves_its_share_to_this_process() -> None:
    parent = os.getpid()

    def fails_in_the_child(items: list[int]) -> list[int]:
        if os.getpid() != parent:
            raise RuntimeError("child")
        return items

    halves = in_two_processes(fails_in_the_child, list(range(10)), 2)
    assert halves == [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]]


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
def test_lint_finds_the_same_in_one_process_and_in_two(
    project_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    header = "{{{{ config(stream='orders', target='silver.t{n}', unique_key='order_id') }}}}\n"
    models = {
        f"m{n:02d}": header.format(n=n)
        + ("MERGE INTO {{ this }} t USING {{ batch }} s ON t.x = s.x WHEN MATCHED THEN DELETE;")
        if n % 2
        else header.format(n=n) + "SELECT * FROM {{ batch }};\nSELECT {{ ghost }};"
        for n in range(12)
    }
    root = project_factory(models)
    assert can_fork(len(models))
    split = lint_project(root)
    monkeypatch.setattr(two_processes, "MIN_ITEMS", 10_000)
    whole = lint_project(root)
    assert len(split.violations) > 12
    assert (split.violations, split.statements) == (whole.violations, whole.statements)
