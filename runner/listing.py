"""What ``runner ls`` lists: the selected models, seeds and tests, as dbt's ``ls`` does.

One selection for every kind (runner/selection.py): a model selector picks models and the
tests of those models, a seed's name its seed, a test's name or ``test_type:`` tests. A name
of one kind matches nothing of the others without error. Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from runner.artifacts import project_path
from runner.project import Project
from runner.selection import SelectorPart, dependency_graph, select_models, select_names
from runner.specs.data_tests import DataTestSpec
from runner.specs.singular import SingularTestSpec
from runner.specs.unit_tests import UnitTestSpec
from runner.suite_selection import load_suite, select_tests

ResourceType = Literal["model", "seed", "test"]
RESOURCE_TYPES: tuple[ResourceType, ...] = ("model", "seed", "test")


@dataclass(frozen=True)
class Resource:
    name: str
    resource_type: ResourceType
    path: str  # project-relative, POSIX
    details: dict[str, Any] = field(default_factory=dict)

    def as_data(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "resource_type": self.resource_type,
            "path": self.path,
            **self.details,
        }


def list_resources(
    project: Project,
    select: list[str] | None = None,
    *,
    exclude: list[str] | None = None,
    state: Path | None = None,
    resource_types: tuple[ResourceType, ...] = RESOURCE_TYPES,
) -> list[Resource]:
    """The selected resources: models upstream first, then seeds, then tests, each by name."""
    suite = load_suite(project)
    test_names = {t.name for t in suite.data_tests} | {t.name for t in suite.unit_tests}
    found: list[Resource] = []
    if "model" in resource_types:
        graph = dependency_graph(project)
        names = select_models(
            project,
            select,
            exclude=exclude,
            state=state,
            elsewhere={*suite.seeds, *test_names},
            other_methods=("test_type",),
        )
        for name in names:
            model = project.models[name]
            found.append(
                Resource(
                    name,
                    "model",
                    project_path(project, model.file),
                    {
                        "stream": model.config.stream,
                        "target": model.target_table,
                        "tags": list(model.config.tags),
                        "depends_on": sorted(graph[name]),
                    },
                )
            )
    if "seed" in resource_types:
        for name in select_names(
            suite.seeds,
            select,
            exclude=exclude,
            elsewhere={*project.models, *test_names},
            other=_not_a_name,
        ):
            seed = suite.seeds[name]
            found.append(
                Resource(name, "seed", project_path(project, seed.csv), {"table": seed.table})
            )
    if "test" in resource_types:
        chosen = select_tests(
            project, suite, select, exclude=exclude, state=state, elsewhere=suite.seeds
        )
        kinds: list[tuple[str, DataTestSpec | UnitTestSpec | SingularTestSpec]]
        kinds = [("data", t) for t in chosen.data_tests]
        kinds += [("unit", t) for t in chosen.unit_tests]
        kinds += [("singular", t) for t in chosen.singular_tests]
        tests = [
            Resource(
                t.name,
                "test",
                project_path(project, t.file),
                {"model": t.model, "test_type": kind, "line": t.line},
            )
            for kind, t in kinds
        ]
        found += sorted(tests, key=lambda r: r.name)
    return found


def _not_a_name(part: SelectorPart) -> bool:
    """A part that selects by method or graph: seeds have neither, so it picks no seed."""
    return part.method != "name" or part.at or part.up is not None or part.down is not None
