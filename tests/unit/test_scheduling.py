"""The order pytest-xdist hands work out in (tests/scheduling.py)."""

from __future__ import annotations

from tests.conftest import PROCESS_GROUPS
from tests.scheduling import GROUP_ORDER, rank


def test_every_group_has_its_place_in_the_order() -> None:
    assert set(GROUP_ORDER) == set(PROCESS_GROUPS.values())


def test_groups_longest_first_then_spark_and_browser_tests_then_unit_tests() -> None:
    scopes = [
        "tests/unit/test_plan.py::test_a",
        "tests/spark/test_build.py::test_b",
        "kafka",
        "a_new_group",
        "cluster",
        "tests/browser/test_docs_site.py::test_c",
        "tests/unit/test_lint.py::test_d",
    ]
    assert sorted(scopes, key=rank) == [
        "cluster",
        "kafka",
        "a_new_group",
        "tests/spark/test_build.py::test_b",
        "tests/browser/test_docs_site.py::test_c",
        "tests/unit/test_plan.py::test_a",
        "tests/unit/test_lint.py::test_d",
    ]
