"""The suite ``runner test`` runs: loaded from the project (``load_suite``) and narrowed by
``--select`` (``select_tests``).

Selectors are model selectors (``orders_merge``, ``orders_merge+``, ``tag:x``: the tests of
those models), test names, and ``test_type:data`` / ``test_type:unit``, in dbt's grammar:
``-s 'orders_merge,test_type:unit'`` intersects, ``-s 'a b'`` is a union. As in dbt,
``test_type:data`` is both the generic tests of ``models/*.yml`` (``test_type:generic``) and
the singular ones of ``tests/*.sql`` (``test_type:singular``); a singular test belongs to
every model it reads. Pure Python.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from runner.errors import ConfigError
from runner.project import Project
from runner.selection import ModelSelector, SelectorPart, Term, parse_selectors, union_of_terms
from runner.singular_sql import load_singular_tests
from runner.specs.data_tests import load_data_tests
from runner.specs.seeds import load_seeds
from runner.specs.suite import TestSuite
from runner.specs.unit_tests import load_unit_tests

TEST_TYPES = ("data", "unit", "generic", "singular")
# the test_type: values each kind of test answers to
_TYPES_OF = {"data": {"data", "generic"}, "singular": {"data", "singular"}, "unit": {"unit"}}


def load_suite(project: Project) -> TestSuite:
    """Every seed, data test, unit test and singular test the project declares (YAML and
    tests/*.sql checked here)."""
    seeds = load_seeds(project)
    return TestSuite(
        seeds,
        load_data_tests(project, seeds),
        load_unit_tests(project),
        load_singular_tests(project, seeds),
    )


def select_tests(
    project: Project,
    suite: TestSuite,
    selectors: list[str] | None,
    *,
    exclude: list[str] | None = None,
    state: Path | None = None,
    elsewhere: Iterable[str] = (),
) -> TestSuite:
    """The tests of ``suite`` that ``selectors`` pick (all of them when there are none), less
    those ``exclude`` picks. dbt's grammar (runner/selection.py): spaces and repeated options
    union, commas intersect; a part is ``test_type:data|unit``, a test's name, or a model
    selector (the tests of those models). Names in ``elsewhere`` (seeds, for ``runner ls``)
    select no test without error."""
    # name -> (the test_type: values it answers to, the models it tests)
    tests: dict[str, tuple[set[str], set[str]]] = {
        t.name: (_TYPES_OF["data"], {t.model}) for t in suite.data_tests
    }
    tests |= {t.name: (_TYPES_OF["unit"], {t.model}) for t in suite.unit_tests}
    tests |= {t.name: (_TYPES_OF["singular"], set(t.models)) for t in suite.singular_tests}
    models = ModelSelector(
        project, state, elsewhere={*tests, *elsewhere}, other_methods=("test_type",)
    )

    def pick(part: SelectorPart, term: Term) -> set[str]:
        if part.method == "test_type":
            if part.value not in TEST_TYPES:
                raise ConfigError(
                    f"{term.option} {term.text}: test_type:{part.value}: the types are "
                    f"{', '.join(TEST_TYPES)}"
                )
            return {n for n, (types, _) in tests.items() if part.value in types}
        if part.plain_name and part.value in tests and part.value not in project.models:
            return {part.value}
        chosen = models.part(part, term)
        return {n for n, (_, tested) in tests.items() if tested & chosen}

    def union(terms: list[Term]) -> set[str]:
        return union_of_terms(terms, tests, pick)

    names = (project.models, tests)
    terms = parse_selectors(selectors, name_sets=names)
    wanted = union(terms) if terms else set(tests)
    wanted -= union(parse_selectors(exclude, "--exclude", names))

    return TestSuite(
        suite.seeds,
        [t for t in suite.data_tests if t.name in wanted],
        [t for t in suite.unit_tests if t.name in wanted],
        [t for t in suite.singular_tests if t.name in wanted],
    )
