"""dbt's node selection grammar over the model graph: ``orders_merge+``, ``1+totals``,
``@orders``, ``tag:x``, ``path:models/silver``, ``config.KEY:VALUE``, ``state:modified+``.

Each ``--select`` value is split at spaces into a union of terms, and repeating ``--select``
adds to the union; within a term, commas intersect (``tag:core,orders_merge+``).
``--exclude`` uses the same grammar and removes what it selects. docs/selection.md has the
table of what differs from dbt and why.

A model depends on the models it ``ref()``s and on the model whose target its stream reads:
the lineage (runner/lineage.py) is the one graph.
Pure Python.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, fields
from graphlib import CycleError, TopologicalSorter
from pathlib import Path, PurePosixPath
from typing import Any

from runner.errors import ConfigError
from runner.lineage import build_lineage
from runner.project import Project
from runner.specs.model import ModelConfig

# @ and n+ in front, an optional method, the value, +n behind (dbt's own spelling).
_PART = re.compile(
    r"^(?P<at>@)?(?:(?P<up_depth>\d*)(?P<up>\+))?"
    r"(?:(?P<method>[A-Za-z_][\w.]*):)?(?P<value>.*?)(?:(?P<down>\+)(?P<down_depth>\d*))?$"
)
METHODS = ("tag", "path", "config.KEY", "state", "test_type")
STATE_VALUES = ("modified", "new")
_GLOB = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class SelectorPart:
    """One comma-separated part of a selector term, e.g. ``2+tag:core+``."""

    text: str
    method: str  # "name", "path", "tag", "config.<key>", "state", "test_type"
    value: str
    at: bool = False
    up: int | None = None  # generations of parents: None none, -1 all
    down: int | None = None  # generations of children: None none, -1 all

    @property
    def plain_name(self) -> bool:
        """A bare model name: no method, no graph operator, no glob."""
        return (
            self.method == "name"
            and not self.at
            and self.up is None
            and self.down is None
            and not _GLOB.search(self.value)
        )


@dataclass(frozen=True)
class Term:
    """A space-separated term: the intersection of its comma-separated parts."""

    text: str
    option: str  # the option it came from: --select, --model, --exclude
    parts: tuple[SelectorPart, ...]


def parse_selectors(
    values: Iterable[str] | None,
    option: str = "--select",
    name_sets: Iterable[Collection[str]] = (),
) -> list[Term]:
    """Every term of ``values`` (one list item per time the option was given).

    A term whose comma-separated parts are all plain names, different members of one of
    ``name_sets`` (the models; the seeds; the tests), is an error: until this release a comma
    meant a union here, and it intersects in dbt (and now here), so such a term would silently
    select nothing. (For one release; then such a term selects nothing, as in dbt.)
    """
    sets = list(name_sets)
    terms: list[Term] = []
    for value in values or []:
        for text in value.split():
            parts = tuple(_parse_part(p, text, option) for p in text.split(","))
            names = [p.value for p in parts]
            if _old_comma_union(parts, sets):
                raise ConfigError(
                    f"{option} {text}: a comma now intersects (dbt); to select both, separate "
                    f"with a space: {_short(option)} '{' '.join(dict.fromkeys(names))}'",
                    hint="or repeat the option once per name; `runner ls -s '...'` shows what a "
                    "selector selects",
                )
            terms.append(Term(text, option, parts))
    return terms


def _old_comma_union(parts: tuple[SelectorPart, ...], sets: list[Collection[str]]) -> bool:
    names = {p.value for p in parts}
    if len(names) < 2 or not all(p.plain_name for p in parts):
        return False
    return any(names <= set(each) for each in sets)


def _short(option: str) -> str:
    return {"--select": "-s", "--model": "-m"}.get(option, option)


def _parse_part(text: str, term: str, option: str) -> SelectorPart:
    match = _PART.match(text)
    if not text or match is None or not match["value"]:
        raise ConfigError(
            f"{option} {term}: '{text}' is not a selector",
            hint="selectors look like NAME, +NAME, NAME+1, @NAME, tag:X, path:models/x.sql, "
            "config.KEY:VALUE, state:modified (docs/selection.md)",
        )
    method = match["method"] or "name"
    value = match["value"]
    if method == "name" and ("/" in value or value.endswith(".sql")):
        method = "path"  # dbt's default: a value that looks like a path is one
    if method not in ("name", "tag", "path", "state", "test_type") and not method.startswith(
        "config."
    ):
        raise ConfigError(
            f"{option} {term}: unknown selector method '{method}:'",
            hint=f"methods: {', '.join(m + ':' for m in METHODS)} (or a model name)",
        )
    if match["at"] and match["up"]:
        raise ConfigError(
            f"{option} {term}: '@' and a leading '+' cannot be combined (as in dbt)",
            hint="@NAME already includes every ancestor of NAME and of its descendants",
        )

    def depth(flag: str | None, digits: str | None) -> int | None:
        if not flag:
            return None
        return int(digits) if digits else -1

    return SelectorPart(
        text=text,
        method=method,
        value=value,
        at=bool(match["at"]),
        up=depth(match["up"], match["up_depth"]),
        down=depth(match["down"], match["down_depth"]),
    )


def mentioned_names(values: Iterable[str] | None) -> set[str]:
    """The model names selectors spell out (``orders+`` -> ``orders``), for commands that
    report models that failed to load when they are selected by name."""
    names: set[str] = set()
    for value in values or []:
        for text in value.split():
            for part in text.split(","):
                match = _PART.match(part)
                if match and not match["method"] and match["value"]:
                    names.add(match["value"])
    return names


# -- models --------------------------------------------------------------------------------


def dependency_graph(project: Project) -> dict[str, set[str]]:
    lineage = build_lineage(project)
    return {name: lineage.upstream_models(name) for name in project.models}


def select_models(
    project: Project,
    selectors: list[str] | None,
    *,
    models: list[str] | None = None,
    exclude: list[str] | None = None,
    state: Path | None = None,
    elsewhere: Iterable[str] = (),
    other_methods: Iterable[str] = (),
) -> list[str]:
    """Model names matching ``selectors`` (all models when none), upstream first.

    ``models`` are selectors given as ``--model`` (same grammar; errors name ``--model``),
    ``exclude`` is removed from the result, ``state`` is the ``--state`` directory that
    ``state:`` compares with. A name that matches no model is an error unless it is in
    ``elsewhere`` (a test or seed, for commands that select those too); parts with a method in
    ``other_methods`` (``test_type``) match no model.
    """
    resolver = ModelSelector(project, state, elsewhere, other_methods)
    graph = resolver.parents
    names = [project.models]
    terms = parse_selectors(models, "--model", names) + parse_selectors(
        selectors, "--select", names
    )
    chosen = resolver.union(terms) if terms else set(project.models)
    chosen -= resolver.union(parse_selectors(exclude, "--exclude", names))
    return [name for name in topological_order(graph) if name in chosen]


def topological_order(graph: dict[str, set[str]]) -> list[str]:
    """Every model, upstream first; ties in name order, so output is stable."""
    try:
        sorter = TopologicalSorter({name: sorted(graph[name]) for name in sorted(graph)})
        return list(sorter.static_order())
    except CycleError as exc:
        cycle = " -> ".join(exc.args[1])
        raise ConfigError(f"models depend on each other in a cycle: {cycle}") from exc


def union_of_terms(
    terms: list[Term], universe: Iterable[str], pick: Callable[[SelectorPart, Term], set[str]]
) -> set[str]:
    """dbt's set operators over ``universe``: the parts of a term (joined by commas) intersect,
    the terms (spaces, repeated options) unite. ``pick`` says what one part selects."""
    chosen: set[str] = set()
    for term in terms:
        found = set(universe)
        for part in term.parts:
            found &= pick(part, term)
        chosen |= found
    return chosen


class ModelSelector:
    """Resolves parsed terms (``parse_selectors``) to sets of model names; see
    ``select_models`` for the arguments."""

    def __init__(
        self,
        project: Project,
        state: Path | None = None,
        elsewhere: Iterable[str] = (),
        other_methods: Iterable[str] = (),
    ) -> None:
        self.project = project
        graph = dependency_graph(project)
        self.parents = graph
        self.children: dict[str, set[str]] = {name: set() for name in graph}
        for name, ups in graph.items():
            for up in ups:
                self.children[up].add(name)
        self.state = state
        self.elsewhere = set(elsewhere)
        self.other_methods = set(other_methods)
        self._modified: dict[str, set[str]] | None = None

    def union(self, terms: list[Term]) -> set[str]:
        """The models the terms select together (each term the intersection of its parts)."""
        return union_of_terms(terms, self.project.models, self.part)

    def part(self, part: SelectorPart, term: Term) -> set[str]:
        """The models one part selects, graph operators applied."""
        base = self.base(part, term)
        selected = set(base)
        if part.up is not None:
            selected |= _closure(base, self.parents, part.up)
        if part.down is not None or part.at:
            down = -1 if part.at or part.down is None else part.down
            selected |= _closure(base, self.children, down)
        if part.at:
            selected |= _closure(selected, self.parents, -1)
        return selected

    def base(self, part: SelectorPart, term: Term) -> set[str]:
        where = f"{term.option} {term.text}"
        models = self.project.models
        if part.method in self.other_methods:
            return set()
        if part.method == "name":
            if _GLOB.search(part.value):
                found = set(fnmatch.filter(models, part.value))
            elif part.value in models:
                return {part.value}
            elif part.value in self.elsewhere:
                return set()
            else:
                raise ConfigError(
                    f"{where}: no model named '{part.value}'",
                    hint=f"models: {', '.join(sorted(models))}",
                )
            if not found:
                raise ConfigError(f"{where}: no model name matches '{part.value}'")
            return found
        if part.method == "tag":
            found = {n for n, m in models.items() if part.value in m.config.tags}
            if not found:
                raise ConfigError(f"{where}: no model has tag '{part.value}'")
            return found
        if part.method == "path":
            found = {
                n for n, m in models.items() if _path_matches(self.project, m.file, part.value)
            }
            if not found:
                raise ConfigError(
                    f"{where}: no model file under '{part.value}'",
                    hint="paths are relative to the project directory, e.g. path:models/silver "
                    "or path:models/orders_*.sql",
                )
            return found
        if part.method.startswith("config."):
            key = part.method.removeprefix("config.")
            known = [f.name for f in fields(ModelConfig)]
            if key not in known:
                raise ConfigError(
                    f"{where}: config() has no key '{key}'", hint=f"keys: {', '.join(known)}"
                )
            return {
                n for n, m in models.items() if _config_matches(getattr(m.config, key), part.value)
            }
        if part.method == "state":
            if part.value not in STATE_VALUES:
                raise ConfigError(
                    f"{where}: state:{part.value} is not a state selector",
                    hint=f"use {' or '.join('state:' + v for v in STATE_VALUES)}",
                )
            return self.modified(where)[part.value]
        raise ConfigError(
            f"{where}: {part.method}: selects tests, not models",
            hint="use it with runner test or runner ls",
        )

    def modified(self, where: str) -> dict[str, set[str]]:
        if self._modified is None:
            from runner.state import modified_models

            self._modified = modified_models(self.project, self.state, where)
        return self._modified


def _closure(start: set[str], edges: dict[str, set[str]], depth: int = -1) -> set[str]:
    """Everything reachable from ``start`` along ``edges`` within ``depth`` steps (-1: any)."""
    seen: set[str] = set()
    frontier = set(start)
    steps = 0
    while frontier and (depth < 0 or steps < depth):
        steps += 1
        frontier = {n for node in frontier for n in edges.get(node, set())} - seen
        seen |= frontier
    return seen


def _path_matches(project: Project, file: Path, pattern: str) -> bool:
    """dbt's ``path:``: a file, a directory (everything under it) or a glob, relative to the
    project directory."""
    try:
        relative = PurePosixPath(file.relative_to(project.root).as_posix())
    except ValueError:
        return False
    wanted = pattern.rstrip("/").removeprefix("./")
    if _GLOB.search(wanted):
        return fnmatch.fnmatch(str(relative), wanted)
    return str(relative) == wanted or PurePosixPath(wanted) in relative.parents


def _config_matches(value: Any, wanted: str) -> bool:
    """``config.KEY:VALUE``: equal as text (booleans as true/false), or a member of a list."""
    if isinstance(value, list | tuple | set | frozenset):
        return any(_config_matches(v, wanted) for v in value)
    if isinstance(value, bool):
        return str(value).lower() == wanted.lower()
    if value is None:
        return False
    return str(value) == wanted


# -- names (seeds) -------------------------------------------------------------------------


def select_names(
    known: Iterable[str],
    selectors: list[str] | None,
    *,
    exclude: list[str] | None = None,
    kind: str = "seed",
    elsewhere: Iterable[str] = (),
    other: Callable[[SelectorPart], bool] | None = None,
) -> list[str]:
    """Names from ``known`` (sorted) that name or glob selectors pick: space and repeated
    options union, commas intersect, ``exclude`` removes. For resources without a graph
    (seeds). A name in ``elsewhere`` matches nothing without error; so does a part for which
    ``other`` is true (a model selector, when listing every resource)."""
    names = sorted(known)

    def union(terms: list[Term]) -> set[str]:
        return union_of_terms(terms, names, pick)

    def pick(part: SelectorPart, term: Term) -> set[str]:
        if other is not None and other(part):
            return set()
        if part.method != "name" or part.at or part.up is not None or part.down is not None:
            raise ConfigError(
                f"{term.option} {term.text}: {kind}s are selected by name or glob only",
                hint=f"{kind}s: {', '.join(names) or '(none)'}",
            )
        found = set(fnmatch.filter(names, part.value))
        if not found and part.value not in elsewhere:
            raise ConfigError(
                f"{term.option} {term.text}: no {kind} named '{part.value}'",
                hint=f"{kind}s: {', '.join(names) or '(none)'}",
            )
        return found

    terms = parse_selectors(selectors, name_sets=[names])
    chosen = union(terms) if terms else set(names)
    chosen -= union(parse_selectors(exclude, "--exclude", [names]))
    return [n for n in names if n in chosen]
