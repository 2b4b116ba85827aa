"""The order of ``runner build`` and what a failure stops, as dbt's ``build`` does.

Seeds load first. Then each model in DAG order (upstream first): its unit tests, the model
itself (one ``runner run`` of it), and then every data test (generic or singular) whose models
have all been built. A step is skipped, with the reason, when

- a model it tests, or the model it is, could not be built (the model failed, was skipped, or
  one of its unit tests failed): its tests are skipped too;
- a data test of a model upstream of it failed, or that model was not built: what depends on
  bad data does not run;
- a seed a test reads failed to load.

Pure Python: the CLI runs the steps (runner/cli/build.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from runner.specs.suite import TestSuite

StepKind = Literal["seed", "unit_test", "model", "test"]


@dataclass(frozen=True)
class BuildStep:
    kind: StepKind
    name: str
    models: tuple[str, ...] = ()  # the model it is, or the models it tests
    seeds: tuple[str, ...] = ()  # the seeds a data test reads


def build_steps(models: list[str], seeds: list[str], suite: TestSuite) -> list[BuildStep]:
    """Every step, in the order they run; ``models`` upstream first, ``suite`` the selected
    tests (a test of a model not in ``models`` runs once the models it tests that are in
    ``models`` have run, or at the end)."""
    steps = [BuildStep("seed", name) for name in seeds]
    pending: list[BuildStep] = [
        BuildStep(
            "test",
            t.name,
            (t.model,),
            tuple(d.name for d in t.reads if d.kind == "seed"),
        )
        for t in suite.data_tests
    ]
    pending += [BuildStep("test", t.name, t.models, t.seeds) for t in suite.singular_tests]
    building = set(models)
    built: set[str] = set()
    for model in models:
        steps += [
            BuildStep("unit_test", t.name, (model,)) for t in suite.unit_tests if t.model == model
        ]
        steps.append(BuildStep("model", model, (model,)))
        built.add(model)
        ready = [s for s in pending if (set(s.models) & building) <= built]
        steps += ready
        pending = [s for s in pending if s not in ready]
    unit_only = [t for t in suite.unit_tests if t.model not in building]
    steps += [BuildStep("unit_test", t.name, (t.model,)) for t in unit_only]
    return steps + pending


@dataclass
class BuildState:
    """What has gone wrong so far, and what that stops."""

    upstream: dict[str, set[str]]  # model -> every model upstream of it
    not_built: dict[str, str] = field(default_factory=dict)  # model -> why
    tests_failed: dict[str, str] = field(default_factory=dict)  # model -> which test failed
    seeds_failed: dict[str, str] = field(default_factory=dict)

    def skip_reason(self, step: BuildStep) -> str | None:
        """Why ``step`` must not run (None: it may)."""
        if step.kind == "seed":
            return None
        for model in step.models:
            if model in self.not_built:
                return self.not_built[model]
        for seed in step.seeds:
            if seed in self.seeds_failed:
                return self.seeds_failed[seed]
        if step.kind != "model":
            return None
        (model,) = step.models
        for parent in sorted(self.upstream.get(model, ())):
            why = self.not_built.get(parent) or self.tests_failed.get(parent)
            if why is not None:
                return why
        return None

    def record(self, step: BuildStep, ok: bool, skipped: str | None = None) -> None:
        """The outcome of ``step``: ``ok``, or failed, or ``skipped`` (with the reason)."""
        if ok and skipped is None:
            return
        if step.kind == "seed":
            self.seeds_failed[step.name] = f"seed {step.name} failed to load"
        elif step.kind == "model":
            self.not_built.setdefault(step.name, skipped or f"model {step.name} failed")
        elif step.kind == "unit_test" and skipped is None:
            self.not_built[step.models[0]] = f"unit test {step.name} failed"
        elif step.kind == "test" and skipped is None:
            for model in step.models:
                self.tests_failed.setdefault(model, f"test {step.name} failed")
