"""The order in which pytest-xdist hands tests to its workers under ``--dist loadgroup``.

pytest-xdist sorts its work units by their number of tests and hands them out in that order, a
unit whenever a worker has two tests or fewer left. A group runs whole on one worker, so the
run ends no sooner than its longest group, and a long group handed out late is the run's tail:
the Kafka folder (many short tests) came first, the cluster group (five long ones) later. Here
the groups go first, longest first (``GROUP_ORDER``: their minutes in CI's ``--durations``),
then every other test outside tests/unit, then the unit tests, whose fractions of a second fill
both workers to the end.
"""

from __future__ import annotations

from xdist.scheduler import LoadGroupScheduling
from xdist.workermanage import WorkerController

# the groups of tests/conftest.py's PROCESS_GROUPS, longest first
GROUP_ORDER = ("cluster", "s3", "kafka", "processes", "catalog", "install")


def rank(scope: str) -> tuple[int, int]:
    """Where a work unit (a group's name, or an ungrouped test's node id) goes in the queue."""
    if "::" not in scope:  # a group: one not listed yet goes after those listed
        return (0, GROUP_ORDER.index(scope) if scope in GROUP_ORDER else len(GROUP_ORDER))
    if scope.startswith("tests/unit/"):
        return (2, 0)
    return (1, 0)  # a test on the suite's SparkSession, or the browser's


class LongestFirst(LoadGroupScheduling):
    """LoadGroupScheduling with its queue in ``rank`` order (stable: collection order within)."""

    _ordered = False

    def _assign_work_unit(self, node: WorkerController) -> None:
        if not self._ordered:  # the queue is whole by the first assignment
            units = sorted(self.workqueue.items(), key=lambda unit: rank(unit[0]))
            self.workqueue.clear()
            self.workqueue.update(units)
            self._ordered = True
        super()._assign_work_unit(node)
