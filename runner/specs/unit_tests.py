"""Model unit tests declared under ``unit_tests:`` in ``models/*.yml``.

```yaml
unit_tests:
  orders_merge_keeps_the_newer_row:
    model: orders_merge
    description: a late, older event does not overwrite a newer row
    given:                       # the target's rows before (default: empty)
      - {order_id: o1, status: shipped, updated_at: "2024-01-01 11:00:00"}
    batches:                     # micro-batches 0, 1, ... in order
      - [{order_id: o1, status: paid, updated_at: "2024-01-01 10:30:00", op: U}]
      - csv: orders_batch_1.csv  # a CSV with a header, beside this YAML file
    expect:                      # the target's rows after; only the columns named are compared
      - {order_id: o1, status: shipped}
    expect_changes:              # optional: the Change Data Feed rows the batches made
      - {order_id: o1, _change_type: update_postimage}
```

Each rows block is a list of rows, ``{rows: [...]}`` or ``{csv: file}``. Values are checked
against the columns of what they fill (the stream's batch, the target, its Change Data Feed)
with file and line in errors. Pure Python.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.errors import ConfigError
from runner.specs.layout import DeclaredProject
from runner.specs.models_yaml import check_keys, models_yaml_documents, require_map
from runner.specs.values import Column, check_value
from runner.yaml_loader import YamlMap

UNIT_TEST_KEYS = ("model", "description", "given", "batches", "expect", "expect_changes")


@dataclass(frozen=True)
class Rows:
    """A block of rows from YAML or CSV; each row a mapping of column -> raw value."""

    rows: tuple[dict[str, Any], ...]
    lines: tuple[int, ...]  # the line of each row in ``file``
    file: Path
    line: int

    @property
    def columns(self) -> list[str]:
        """The columns named in any row, in first-seen order."""
        return list(dict.fromkeys(name for row in self.rows for name in row))


@dataclass(frozen=True)
class UnitTestSpec:
    """A model unit test: target before, batches in order, target (and changes) after."""

    name: str
    model: str
    file: Path
    line: int
    given: Rows
    batches: tuple[Rows, ...]
    expect: Rows
    expect_changes: Rows | None = None
    description: str = ""


def load_unit_tests(project: DeclaredProject) -> list[UnitTestSpec]:
    """Every unit test under ``unit_tests:`` in ``models/*.yml``."""
    tests: dict[str, UnitTestSpec] = {}
    for doc in models_yaml_documents(project):
        declared = doc.child("unit_tests")
        for name, raw in declared.items():
            spec = require_map(raw, f"unit test '{name}'", declared, name)
            if name in tests:
                raise ConfigError(
                    f"unit test '{name}' is declared twice (also in {tests[name].file})",
                    file=doc.file,
                    line=declared.line_of(name),
                )
            tests[str(name)] = _unit_test(project, str(name), spec)
    return list(tests.values())


def _unit_test(project: DeclaredProject, name: str, raw: YamlMap) -> UnitTestSpec:
    check_keys(raw, UNIT_TEST_KEYS, f"unit test '{name}'")
    assert raw.file is not None
    model = raw.get("model")
    if model not in project.models:
        raise ConfigError(
            f"unit test '{name}': model {model!r} does not exist",
            file=raw.file,
            line=raw.line_of("model"),
            hint=f"models: {', '.join(sorted(project.models))}",
        )
    for required in ("batches", "expect"):
        if raw.get(required) is None:
            message = f"unit test '{name}' needs '{required}'"
            raise ConfigError(message, file=raw.file, line=raw.line)
    batches = raw["batches"]
    if not isinstance(batches, list) or not batches:
        raise ConfigError(
            f"unit test '{name}': batches must be a non-empty list of row blocks",
            file=raw.file,
            line=raw.line_of("batches"),
        )
    changes = raw.get("expect_changes")
    return UnitTestSpec(
        name=name,
        model=str(model),
        file=raw.file,
        line=raw.line,
        given=_rows(raw.get("given") or [], raw, "given"),
        batches=tuple(_rows(batch, raw, "batches") for batch in batches),
        expect=_rows(raw["expect"], raw, "expect"),
        expect_changes=_rows(changes, raw, "expect_changes") if changes is not None else None,
        description=str(raw.get("description") or ""),
    )


def _rows(value: Any, parent: YamlMap, key: str) -> Rows:
    """A rows block: a list of mappings, ``{rows: [...]}`` or ``{csv: path}``."""
    assert parent.file is not None
    line = getattr(value, "line", parent.line_of(key))
    if isinstance(value, YamlMap) and "csv" in value:
        return _csv_rows(parent.file.parent / str(value["csv"]), parent.file, line)
    if isinstance(value, YamlMap) and "rows" in value:
        value = value["rows"] or []
    if not isinstance(value, list) or not all(isinstance(r, YamlMap) for r in value):
        raise ConfigError(
            f"'{key}' must be a list of rows ({{column: value}}), {{rows: [...]}} or {{csv: file}}",
            file=parent.file,
            line=line,
        )
    rows = tuple({str(k): v for k, v in row.items()} for row in value)
    return Rows(rows, tuple(row.line for row in value), parent.file, line)


def _csv_rows(path: Path, yaml_file: Path, line: int) -> Rows:
    if not path.exists():
        raise ConfigError(f"rows CSV {path} does not exist", file=yaml_file, line=line)
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows, lines = [], []
        for record in reader:
            rows.append({k.strip(): v for k, v in record.items()})
            lines.append(reader.line_num)
    return Rows(tuple(rows), tuple(lines), path, 1)


def checked_rows(block: Rows, columns: list[Column], what: str) -> list[tuple[str | None, ...]]:
    """``block``'s rows over ``columns`` (missing values are NULL), each value checked."""
    by_name = {c.name: c for c in columns}
    result = []
    for row, line in zip(block.rows, block.lines, strict=True):
        unknown = [name for name in row if name not in by_name]
        if unknown:
            raise ConfigError(
                f"{what}: column '{unknown[0]}' is not one of {', '.join(by_name)}",
                file=block.file,
                line=line,
            )
        try:
            result.append(tuple(_checked(row.get(c.name), c) for c in columns))
        except ValueError as exc:
            raise ConfigError(f"{what}: {exc}", file=block.file, line=line) from None
    return result


def _checked(value: Any, column: Column) -> str | None:
    try:
        return check_value(value, column)
    except ValueError as exc:
        raise ValueError(f"column '{column.name}': {exc}") from None
