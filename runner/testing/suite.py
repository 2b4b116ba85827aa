"""Which tests ``runner test`` runs: every data test and unit test, narrowed by ``--select``.

Selectors are model selectors (``orders_merge``, ``orders_merge+``, ``tag:x``: the tests of
those models), test names, and ``test_type:data`` / ``test_type:unit``. Terms of one kind are
a union; the kinds narrow each other. Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from runner.errors import ConfigError
from runner.project import Project
from runner.selection import select_models
from runner.testing.data_tests import DataTestSpec, load_data_tests
from runner.testing.seeds import SeedSpec, load_seeds
from runner.testing.unit_specs import UnitTestSpec, load_unit_tests

TEST_TYPES = ("data", "unit")


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


def load_suite(project: Project) -> TestSuite:
    """Every seed, data test and unit test the project declares (YAML checked here)."""
    seeds = load_seeds(project)
    return TestSuite(seeds, load_data_tests(project, seeds), load_unit_tests(project))


def select_tests(project: Project, suite: TestSuite, selectors: list[str] | None) -> TestSuite:
    """The tests of ``suite`` that ``selectors`` pick (all of them when there are none)."""
    terms = [t for s in selectors or [] for t in s.replace(",", " ").split() if t]
    types = {t.removeprefix("test_type:") for t in terms if t.startswith("test_type:")}
    unknown_types = types - set(TEST_TYPES)
    if unknown_types:
        raise ConfigError(
            f"--select test_type:{sorted(unknown_types)[0]}: the types are data and unit"
        )
    names = {t.name for t in suite.data_tests} | {t.name for t in suite.unit_tests}
    by_name = {t for t in terms if t in names and t not in project.models}
    model_terms = [t for t in terms if not t.startswith("test_type:") and t not in by_name]
    models = set(select_models(project, model_terms)) if model_terms else None

    def chosen(kind: str, name: str, model: str) -> bool:
        if types and kind not in types:
            return False
        if models is None and not by_name:
            return True
        return name in by_name or (models is not None and model in models)

    return TestSuite(
        suite.seeds,
        [t for t in suite.data_tests if chosen("data", t.name, t.model)],
        [t for t in suite.unit_tests if chosen("unit", t.name, t.model)],
    )
