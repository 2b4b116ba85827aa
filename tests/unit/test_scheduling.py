"""The order pytest-xdist hands work out in (tests/scheduling.py), on a simulated run: workers
that take a test only when they know the next one, as pytest-xdist's do, and tests that take
the seconds ``tests.scheduling.SECONDS`` expects of them."""

from __future__ import annotations

import heapq
from types import SimpleNamespace
from typing import Any

import pytest

import tests.scheduling
from tests.conftest import PROCESS_GROUPS
from tests.scheduling import SECONDS, LongestFirst, seconds

CLUSTER = "tests/cluster/test_cluster_crashes.py::test_sigkill_and_outage@cluster"  # 430 s
CRASH = "tests/spark/test_crash_recovery.py::test_sigkill_and_restart@processes"  # 200 s
CATALOG = "tests/catalog/test_shared_catalog.py::test_c@catalog"  # 200 s
UNIT = [f"tests/unit/test_plan.py::test_{n}" for n in range(20)]


class Worker:
    """What the scheduler sees of a pytest-xdist worker: the tests it was sent, in order."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.queue: list[int] = []
        self.ran: list[str] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.queue.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def simulate(collection: list[str], workers: int) -> tuple[float, list[Worker]]:
    """Run ``collection`` on ``workers`` simulated workers; returns when the last test ended."""
    config: Any = SimpleNamespace(
        getvalue=lambda name: [f"{workers}*popen"], option=SimpleNamespace(loadscopereorder=True)
    )

    def silent(*args: object) -> None:
        pass

    quiet: Any = SimpleNamespace(loadgroupsched=silent, loadscopesched=silent)
    scheduler = LongestFirst(config, quiet)
    nodes = [Worker(f"gw{n}") for n in range(workers)]
    for node in nodes:
        scheduler.add_node(node)  # type: ignore[arg-type]
        scheduler.add_node_collection(node, collection)  # type: ignore[arg-type]
    scheduler.schedule()
    now, running, ends = 0.0, set(), []  # ends: (time, worker's number, test's index)
    while True:
        for number, node in enumerate(nodes):
            # a worker runs a test once it knows the next one, or knows there is none
            ready = len(node.queue) >= 2 or (node.shutting_down and node.queue)
            if number not in running and ready:
                index = node.queue.pop(0)
                node.ran.append(collection[index])
                heapq.heappush(ends, (now + seconds(collection[index]), number, index))
                running.add(number)
        if not ends:
            return now, nodes
        now, number, index = heapq.heappop(ends)
        running.discard(number)
        scheduler.mark_test_complete(nodes[number], index)  # type: ignore[arg-type]


def test_a_test_expects_the_seconds_of_the_longest_key_it_starts_with() -> None:
    assert (
        seconds("tests/spark/test_backfill.py::test_x") == SECONDS["tests/spark/test_backfill.py"]
    )
    survives = "tests/spark/test_backfill.py::test_backfill_survives_sigkills"
    assert seconds(f"{survives}_in_the_shadow_build@g") == SECONDS[survives]
    assert seconds("tests/spark/test_a_new_one.py::test_x") == 10.0


def test_every_group_has_a_test_expected_to_take_minutes() -> None:
    # the groups' long tests are listed, so that the groups go out first
    assert set(PROCESS_GROUPS.values()) == {
        "catalog", "cluster", "install", "kafka", "s3", "processes"
    }  # fmt: skip


def test_a_long_group_does_not_queue_the_next_long_one_behind_its_last_test() -> None:
    # one-test groups: their worker asks for more at once; the catalog group would wait 430 s
    # behind the cluster's test on the first worker: it goes to the second, free at 200 s
    end, (first, second) = simulate([*UNIT, CATALOG, CRASH, CLUSTER], workers=2)
    assert first.ran[0] == CLUSTER and CATALOG not in first.ran
    assert second.ran[0] in (CRASH, CATALOG) and {CRASH, CATALOG} <= set(second.ran)
    assert end < 430 + 1  # the cluster's test, and a few unit tests
    assert sorted(first.ran + second.ran) == sorted([*UNIT, CATALOG, CRASH, CLUSTER])


def test_without_the_busy_rule_the_next_long_unit_waits_behind_the_longest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tests.scheduling, "BUSY_SECONDS", float("inf"))
    end, (first, _) = simulate([*UNIT, CATALOG, CRASH, CLUSTER], workers=2)
    assert first.ran[:2] == [CLUSTER, CRASH] and end >= 430 + 200


def test_the_unit_tests_fill_the_workers_to_the_end() -> None:
    _, nodes = simulate([*UNIT, CATALOG, CRASH, CLUSTER], workers=3)
    assert [node.ran[0] for node in nodes] == [CLUSTER, CATALOG, CRASH]
    assert all(any(test in UNIT for test in node.ran) for node in nodes)
