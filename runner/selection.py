"""dbt-style model selection and ordering: ``orders_merge+``, ``+customer_totals``, ``tag:x``.

A model depends on the models it ``ref()``s and on the model whose target its stream reads:
the lineage (runner/lineage.py) is the one graph.
Pure Python.
"""

from __future__ import annotations

from graphlib import CycleError, TopologicalSorter

from runner.errors import ConfigError
from runner.lineage import build_lineage
from runner.project import Project


def dependency_graph(project: Project) -> dict[str, set[str]]:
    lineage = build_lineage(project)
    return {name: lineage.upstream_models(name) for name in project.models}


def select_models(
    project: Project, selectors: list[str] | None, *, models: list[str] | None = None
) -> list[str]:
    """Model names matching ``selectors`` (all models when none), upstream first.

    Each selector is a model name or ``tag:name``; a leading ``+`` adds everything upstream
    of it, a trailing ``+`` everything downstream. Several selectors (space- or comma-separated)
    select the union. ``models`` are selectors given as ``--model``: the same syntax, and errors
    about them name ``--model`` (the option the user typed).
    """
    graph = dependency_graph(project)
    terms = [
        (option, t)
        for option, given in (("--model", models), ("--select", selectors))
        for s in given or []
        for t in s.replace(",", " ").split()
        if t
    ]
    if not terms:
        chosen = set(project.models)
    else:
        chosen = set()
        for option, term in terms:
            chosen |= _select_one(project, graph, term, option)
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        cycle = " -> ".join(exc.args[1])
        raise ConfigError(f"models depend on each other in a cycle: {cycle}") from exc
    return [name for name in order if name in chosen]


def _select_one(
    project: Project, graph: dict[str, set[str]], term: str, option: str = "--select"
) -> set[str]:
    with_upstream = term.startswith("+")
    with_downstream = term.endswith("+")
    core = term.strip("+")
    if core.startswith("tag:"):
        tag = core[4:]
        base = {n for n, m in project.models.items() if tag in m.config.tags}
        if not base:
            raise ConfigError(f"{option} {term}: no model has tag '{tag}'")
    elif core in project.models:
        base = {core}
    else:
        raise ConfigError(
            f"{option} {term}: no model named '{core}'",
            hint=f"models: {', '.join(sorted(project.models))}",
        )
    selected = set(base)
    if with_upstream:
        selected |= _closure(base, graph)
    if with_downstream:
        children: dict[str, set[str]] = {name: set() for name in graph}
        for name, parents in graph.items():
            for parent in parents:
                children[parent].add(name)
        selected |= _closure(base, children)
    return selected


def _closure(start: set[str], edges: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    pending = list(start)
    while pending:
        for neighbour in edges.get(pending.pop(), set()):
            if neighbour not in seen:
                seen.add(neighbour)
                pending.append(neighbour)
    return seen
