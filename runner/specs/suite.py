"""The test suite a project declares: its seeds, data tests, unit tests and singular tests
(runner/suite_selection.py loads it and narrows it to what a run covers)."""

from __future__ import annotations

from dataclasses import dataclass, field

from runner.specs.data_tests import DataTestSpec
from runner.specs.seeds import SeedSpec
from runner.specs.singular import SingularTestSpec
from runner.specs.unit_tests import UnitTestSpec


@dataclass
class TestSuite:
    """The project's seeds and the tests to run."""

    __test__ = False  # not a pytest test class

    seeds: dict[str, SeedSpec] = field(default_factory=dict)
    data_tests: list[DataTestSpec] = field(default_factory=list)
    unit_tests: list[UnitTestSpec] = field(default_factory=list)
    singular_tests: list[SingularTestSpec] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.data_tests) + len(self.unit_tests) + len(self.singular_tests)
