"""The test suite a project declares: its seeds, data tests and unit tests
(runner/suite_selection.py narrows it to what a run covers)."""

from __future__ import annotations

from dataclasses import dataclass, field

from runner.specs.data_tests import DataTestSpec, load_data_tests
from runner.specs.layout import DeclaredProject
from runner.specs.seeds import SeedSpec, load_seeds
from runner.specs.unit_tests import UnitTestSpec, load_unit_tests


@dataclass
class TestSuite:
    """The project's seeds and the tests to run."""

    __test__ = False  # not a pytest test class

    seeds: dict[str, SeedSpec] = field(default_factory=dict)
    data_tests: list[DataTestSpec] = field(default_factory=list)
    unit_tests: list[UnitTestSpec] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.data_tests) + len(self.unit_tests)


def load_suite(project: DeclaredProject) -> TestSuite:
    """Every seed, data test and unit test the project declares (YAML checked here)."""
    seeds = load_seeds(project)
    return TestSuite(seeds, load_data_tests(project, seeds), load_unit_tests(project))
