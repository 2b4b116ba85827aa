"""Data tests declared in ``models/*.yml`` (dbt style), each compiled to one SQL query that
returns the failing rows.

```yaml
models:
  orders_merge:
    freshness: {column: updated_at, max_age: 2 hours}
    tests:                                   # model-level
      - expression_is_true: {expression: "amount >= 0"}
    columns:
      order_id: {tests: [unique, not_null]}
      status:
        tests:
          - accepted_values: {values: [created, paid, shipped]}
      customer_id:
        tests:
          - relationships: {to: "ref('customers')", field: customer_id}
```

``ref('x')`` names a model (its target table) or a seed; anything else is a table name. The SQL
comes from the ``test_<kind>`` macros (runner/model_tests/data_test_sql.py renders them). Pure
Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.errors import ConfigError
from runner.specs.layout import DeclaredProject
from runner.specs.models_yaml import check_keys, models_yaml_documents, require_map
from runner.specs.seeds import SeedSpec
from runner.yaml_loader import YamlMap

# kind -> (parameters it requires, whether it tests one column)
KINDS: dict[str, tuple[tuple[str, ...], bool]] = {
    "unique": ((), True),
    "not_null": ((), True),
    "accepted_values": (("values",), True),
    "relationships": (("to", "field"), True),
    "expression_is_true": (("expression",), False),
    "freshness": (("column", "max_age"), False),
}
_REF = re.compile(r"""ref\(\s*['"]([\w.]+)['"]\s*\)""")
# a freshness test's max_age: "2 hours" (data_test_sql reads its number and unit)
AGE = re.compile(r"(\d+)\s+(second|minute|hour|day|week)s?", re.IGNORECASE)


@dataclass(frozen=True)
class Dependency:
    """A table a data test reads: a model's target, a seed, or a table by name."""

    kind: str  # 'model' | 'seed' | 'table'
    name: str
    table: str


@dataclass(frozen=True)
class DataTestSpec:
    """One data test of one model: what it checks, with its parameters and where it is."""

    name: str
    kind: str
    model: str
    column: str | None
    params: dict[str, Any]
    file: Path
    line: int
    reads: tuple[Dependency, ...] = field(default=())


def load_data_tests(project: DeclaredProject, seeds: dict[str, SeedSpec]) -> list[DataTestSpec]:
    """Every data test under ``models:`` in ``models/*.yml``, in declaration order."""
    tests: list[DataTestSpec] = []
    for doc in models_yaml_documents(project):
        models = doc.child("models")
        for model_name, raw in models.items():
            if model_name not in project.models:
                raise ConfigError(
                    f"tests for '{model_name}': no such model",
                    file=doc.file,
                    line=models.line_of(model_name),
                    hint=f"models: {', '.join(sorted(project.models))}",
                )
            spec = require_map(raw, f"models.{model_name}", models, model_name)
            tests.extend(_model_tests(project, seeds, str(model_name), spec))
    _number_duplicate_names(tests)
    return tests


def _model_tests(
    project: DeclaredProject, seeds: dict[str, SeedSpec], model: str, raw: YamlMap
) -> list[DataTestSpec]:
    check_keys(raw, ("description", "tests", "data_tests", "columns", "freshness"), model)
    found = []
    if raw.get("freshness") is not None:
        params = require_map(raw["freshness"], f"{model}.freshness", raw, "freshness")
        found.append(_test(project, seeds, model, None, "freshness", dict(params), params))
    for entry, line_of in _test_entries(raw):
        found.append(_parse_entry(project, seeds, model, None, entry, line_of))
    for column, column_raw in _columns(raw):
        for entry, line_of in _test_entries(column_raw):
            found.append(_parse_entry(project, seeds, model, column, entry, line_of))
    return found


def _columns(raw: YamlMap) -> list[tuple[str, YamlMap]]:
    """``columns:`` as a mapping (name -> spec) or as dbt's list of ``{name: ..., tests: ...}``."""
    columns = raw.get("columns")
    if not columns:  # a model documented or tested without columns: (it was an error)
        return []
    if isinstance(columns, list):
        pairs = [(str(c.get("name")), c) for c in columns if isinstance(c, YamlMap)]
    else:
        columns = require_map(columns, "columns", raw, "columns")
        pairs = [
            (str(k), require_map(v, f"columns.{k}", columns, k))
            for k, v in columns.items()
            if v is not None  # a column listed without tests
        ]
    for name, spec in pairs:
        check_keys(spec, ("name", "description", "tests", "data_tests"), f"column '{name}'")
    return pairs


def _test_entries(raw: YamlMap) -> list[tuple[Any, YamlMap]]:
    key = "data_tests" if "data_tests" in raw else "tests"
    entries = raw.get(key) or []
    if not isinstance(entries, list):
        raise ConfigError(f"'{key}' must be a list", file=raw.file, line=raw.line_of(key))
    return [(entry, raw) for entry in entries]


def _parse_entry(
    project: DeclaredProject,
    seeds: dict[str, SeedSpec],
    model: str,
    column: str | None,
    entry: Any,
    parent: YamlMap,
) -> DataTestSpec:
    """``unique`` or ``{accepted_values: {values: [...]}}`` -> a spec."""
    if isinstance(entry, str):
        return _test(project, seeds, model, column, entry, {}, parent)
    if isinstance(entry, YamlMap) and len(entry) == 1:
        kind, params = next(iter(entry.items()))
        if params is None:
            return _test(project, seeds, model, column, str(kind), {}, entry)
        located = require_map(params, str(kind), entry, kind)
        return _test(project, seeds, model, column, str(kind), dict(located), located)
    raise ConfigError(
        "a test is a name (unique) or a mapping of one name to its parameters "
        "({accepted_values: {values: [a, b]}})",
        file=parent.file,
        line=getattr(entry, "line", parent.line),
    )


def _test(
    project: DeclaredProject,
    seeds: dict[str, SeedSpec],
    model: str,
    column: str | None,
    kind: str,
    params: dict[str, Any],
    where: YamlMap,
) -> DataTestSpec:
    file, line = where.file or project.root, where.line
    if kind not in KINDS:
        raise ConfigError(
            f"unknown data test '{kind}'", file=file, line=line, hint=f"known: {', '.join(KINDS)}"
        )
    required, per_column = KINDS[kind]
    name = str(params.pop("name", "")) or "_".join(filter(None, [kind, model, column]))
    missing = [p for p in required if params.get(p) in (None, "", [])]
    if missing or (per_column and column is None):
        what = f"parameter(s) {', '.join(missing)}" if missing else "a column (under columns:)"
        raise ConfigError(f"{kind} test of {model} needs {what}", file=file, line=line)
    if kind == "freshness" and not AGE.fullmatch(str(params["max_age"]).strip()):
        raise ConfigError(
            f"freshness max_age {params['max_age']!r} is not like '2 hours'",
            file=file,
            line=line,
            hint="a number and one of second(s), minute(s), hour(s), day(s), week(s)",
        )
    reads = [Dependency("model", model, project.models[model].target_table)]
    if kind == "relationships":
        reads.append(_resolve(project, seeds, str(params["to"]), file, line))
    return DataTestSpec(name, kind, model, column, params, file, line, tuple(reads))


def _resolve(
    project: DeclaredProject, seeds: dict[str, SeedSpec], to: str, file: Path, line: int
) -> Dependency:
    match = _REF.fullmatch(to.strip())
    if match is None:
        return Dependency("table", to, to.strip())
    name = match.group(1)
    if name in project.models:
        return Dependency("model", name, project.models[name].target_table)
    if name in seeds:
        return Dependency("seed", name, seeds[name].table)
    raise ConfigError(
        f"relationships to {to}: no model or seed named '{name}'",
        file=file,
        line=line,
        hint=f"models: {', '.join(sorted(project.models))}; seeds: {', '.join(sorted(seeds))}",
    )


def _number_duplicate_names(tests: list[DataTestSpec]) -> None:
    seen: dict[str, int] = {}
    for index, test in enumerate(tests):
        seen[test.name] = seen.get(test.name, 0) + 1
        if seen[test.name] > 1:
            renamed = f"{test.name}_{seen[test.name]}"
            tests[index] = DataTestSpec(**{**test.__dict__, "name": renamed})
