"""Which tests ``runner test`` runs: every data test and unit test, narrowed by ``--select``.

Selectors are model selectors (``orders_merge``, ``orders_merge+``, ``tag:x``: the tests of
those models), test names, and ``test_type:data`` / ``test_type:unit``, in dbt's grammar:
``-s 'orders_merge,test_type:unit'`` intersects, ``-s 'a b'`` is a union. Pure Python.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from runner.errors import ConfigError
from runner.project import Project
from runner.selection import ModelSelector, SelectorPart, Term, parse_selectors, union_of_terms
from runner.specs.suite import TestSuite

TEST_TYPES = ("data", "unit")


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
    tests: dict[str, tuple[str, str]] = {t.name: ("data", t.model) for t in suite.data_tests}
    tests |= {t.name: ("unit", t.model) for t in suite.unit_tests}
    models = ModelSelector(
        project, state, elsewhere={*tests, *elsewhere}, other_methods=("test_type",)
    )

    def pick(part: SelectorPart, term: Term) -> set[str]:
        if part.method == "test_type":
            if part.value not in TEST_TYPES:
                raise ConfigError(
                    f"{term.option} {term.text}: test_type:{part.value}: the types are data "
                    "and unit"
                )
            return {n for n, (kind, _) in tests.items() if kind == part.value}
        if part.plain_name and part.value in tests and part.value not in project.models:
            return {part.value}
        chosen = models.part(part, term)
        return {n for n, (_, model) in tests.items() if model in chosen}

    def union(terms: list[Term]) -> set[str]:
        return union_of_terms(terms, tests, pick)

    names = (project.models, tests)
    terms = parse_selectors(selectors, name_sets=names)
    wanted = union(terms) if terms else set(tests)
    wanted -= union(parse_selectors(exclude, "--exclude", names))

    def chosen(kind: str, name: str, model: str) -> bool:
        return name in wanted

    return TestSuite(
        suite.seeds,
        [t for t in suite.data_tests if chosen("data", t.name, t.model)],
        [t for t in suite.unit_tests if chosen("unit", t.name, t.model)],
    )
