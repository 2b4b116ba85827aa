"""The order in which pytest-xdist hands tests to its workers under ``--dist loadgroup``.

pytest-xdist sorts its work units (a group, or one test outside any group) by their number of
tests and hands them out in that order, a unit whenever a worker has two tests or fewer left. A
group runs whole on one worker, so the run ends no sooner than its longest group, and a long
unit handed out late is the run's tail. Here the units go longest first, as CI's
``--durations`` timed them (``SECONDS``; a test not listed counts ``DEFAULT_SECONDS``), and the
unit tests' fractions of a second fill the workers to the end.

A worker asks for its next unit before it starts its last test (it needs to know what follows
to tear fixtures down). When that last test is a long one (a cluster group's crash test), the
next long unit would wait behind it while another worker goes idle: a worker still busy for
more than ``BUSY_SECONDS`` gets the shortest unit left instead, and the long ones go to the
workers that are free.
"""

from __future__ import annotations

from xdist.scheduler import LoadGroupScheduling
from xdist.workermanage import WorkerController

# Seconds the slowest tests took in CI (`--durations` of a full run, stop 37: two workers on two
# cores; a group's servers' start counted in its first test), by node id or by the start of one
# (a module, a folder); the longest key that matches wins. Only their order matters.
SECONDS = {
    "tests/cluster/test_cluster_crashes.py::test_sigkill_and_outage": 430,
    "tests/cluster/test_cluster_crashes.py::test_sigkill_over_connect": 240,
    "tests/cluster/test_example_on_clusters.py": 170,
    "tests/cluster/test_connect_concurrency.py": 140,
    "tests/spark/test_backfill.py::test_backfill_survives_sigkills": 220,
    "tests/spark/test_backfill.py": 100,
    "tests/spark/test_crash_recovery.py::test_sigkill_and_restart": 200,
    "tests/catalog/test_shared_catalog.py": 200,
    "tests/s3/test_s3_warehouse.py::test_the_example_on_s3": 175,
    "tests/s3/test_s3_warehouse.py::test_show_seed_test_and_docs_on_s3": 70,
    "tests/s3/test_s3_warehouse.py::test_stream_on_s3_stops_on_sigterm": 60,
    "tests/s3/test_s3_warehouse.py::test_full_refresh": 40,
    "tests/spark/test_build.py::test_build_runs_in_dag_order": 115,
    "tests/kafka/test_kafka_connect.py": 90,
    "tests/install/": 90,
    "tests/kafka/test_kafka_crash.py": 70,
    "tests/spark/test_live_view.py": 60,
    "tests/kafka/test_kafka_backfill.py": 50,
    "tests/spark/test_orders_pipeline.py": 30,
    "tests/spark/test_batch_invariance.py": 28,
    "tests/spark/test_many_models.py": 28,
    "tests/spark/test_expectations.py": 27,
    "tests/kafka/test_kafka_spec.py": 1,
    "tests/browser/": 1,
    "tests/unit/": 0.1,
}
DEFAULT_SECONDS = 10.0
BUSY_SECONDS = 60.0


def seconds(nodeid: str) -> float:
    """What a test is expected to take (its node id may carry pytest-xdist's ``@group``)."""
    nodeid = nodeid.split("@", 1)[0]
    keys = [key for key in SECONDS if nodeid.startswith(key)]
    return SECONDS[max(keys, key=len)] if keys else DEFAULT_SECONDS


def unit_seconds(tests: dict[str, bool]) -> float:
    """What the tests of a work unit not yet completed are expected to take."""
    return sum(seconds(nodeid) for nodeid, completed in tests.items() if not completed)


class LongestFirst(LoadGroupScheduling):
    """LoadGroupScheduling with its queue longest first, and short units for busy workers."""

    _ordered = False

    def _assign_work_unit(self, node: WorkerController) -> None:
        if not self._ordered:  # the queue is whole by the first assignment
            units = sorted(self.workqueue.items(), key=lambda unit: -unit_seconds(unit[1]))
            self.workqueue.clear()
            self.workqueue.update(units)
            self._ordered = True
        left = sum(unit_seconds(tests) for tests in self.assigned_work.get(node, {}).values())
        if left > BUSY_SECONDS and len(self.workqueue) > 1:
            self.workqueue.move_to_end(next(reversed(self.workqueue)), last=False)
        super()._assign_work_unit(node)
