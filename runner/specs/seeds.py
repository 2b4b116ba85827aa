"""Seeds: CSV reference data declared in ``seeds/*.yml``, checked in Python before loading.

```yaml
seeds:
  customers:                 # seeds/customers.csv
    target: ref.customers    # default: seeds.<name>
    columns: "customer_id STRING, name STRING, tier STRING"
    header: true             # default true; the header must name the declared columns
    delimiter: ","           # default ","
```

Every value is checked against its column's type here, so a bad row is reported as
``seeds/customers.csv:4: column 'tier': ...`` before any JVM starts. Pure Python.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from runner.errors import ConfigError, RunnerError
from runner.specs.layout import DeclaredProject, project_folder, yaml_files
from runner.specs.models_yaml import description_of
from runner.specs.target import split_table_name
from runner.specs.values import Column, check_value, parse_columns
from runner.yaml_loader import YamlMap, check_keys, load_yaml

SEED_KEYS = ("target", "columns", "header", "delimiter", "description")


class SeedError(RunnerError):
    """A seed CSV does not match its declaration (a bad value, a missing column)."""


@dataclass(frozen=True)
class SeedSpec:
    """One seed: its CSV, the table it loads into and its declared columns."""

    name: str
    csv: Path
    file: Path  # the YAML that declares it
    line: int
    table: str
    columns_ddl: str
    columns: tuple[Column, ...]
    header: bool = True
    delimiter: str = ","
    description: str = ""  # documentation only: the manifest and the docs site show it


def load_seeds(project: DeclaredProject) -> dict[str, SeedSpec]:
    """Every seed of the project: each ``seeds/*.csv`` with its declaration in ``seeds/*.yml``."""
    folder = project_folder(project.root, "seeds")
    seeds: dict[str, SeedSpec] = {}
    for file in yaml_files(folder):
        document = load_yaml(file)
        check_keys(document, ("seeds",), file.name)
        declared = document.child("seeds")
        for name, raw in declared.items():
            line = declared.line_of(name)
            if name in seeds:
                raise ConfigError(
                    f"seed '{name}' is declared twice (also in {seeds[name].file})",
                    file=file,
                    line=line,
                )
            if not isinstance(raw, YamlMap):
                raise ConfigError(f"seed '{name}' must be a mapping", file=file, line=line)
            seeds[name] = _seed_spec(str(name), raw, folder, file, line)
    for csv_file in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
        if csv_file.stem not in seeds:
            raise ConfigError(
                f"{csv_file.name} has no declaration in {folder.name}/*.yml",
                file=csv_file,
                hint=f"add to {folder.name}/seeds.yml:  seeds: {{{csv_file.stem}: "
                '{columns: "id STRING, name STRING"}}',
            )
    return seeds


def _seed_spec(name: str, raw: YamlMap, folder: Path, file: Path, line: int) -> SeedSpec:
    check_keys(raw, SEED_KEYS, f"seed '{name}'")
    csv_file = folder / f"{name}.csv"
    if not csv_file.exists():
        raise ConfigError(f"seed '{name}': {csv_file.name} does not exist", file=file, line=line)
    ddl = raw.get("columns")
    if not isinstance(ddl, str) or not ddl.strip():
        raise ConfigError(
            f"seed '{name}' needs 'columns' as DDL, e.g. \"customer_id STRING, tier STRING\"",
            file=file,
            line=line,
        )
    table = str(raw.get("target") or f"seeds.{name}")
    try:
        columns = parse_columns(ddl)
        split_table_name(table)
    except ValueError as exc:
        raise ConfigError(f"seed '{name}': {exc}", file=file, line=line) from exc
    delimiter = str(raw.get("delimiter", ","))
    if len(delimiter) != 1:
        raise ConfigError(f"seed '{name}': delimiter must be one character", file=file, line=line)
    return SeedSpec(
        name=name,
        csv=csv_file,
        file=file,
        line=line,
        table=table,
        columns_ddl=ddl.strip(),
        columns=tuple(columns),
        header=bool(raw.get("header", True)),
        delimiter=delimiter,
        description=description_of(raw, f"seed '{name}'"),
    )


def read_seed(seed: SeedSpec) -> list[tuple[str | None, ...]]:
    """The CSV's rows in declared column order, each value checked and as text for Spark's
    CAST; an empty field is NULL. SeedError names the CSV, the line and the column."""
    with seed.csv.open(newline="", encoding="utf-8") as handle:
        return read_csv_rows(handle, seed.csv, list(seed.columns), seed.header, seed.delimiter)


def read_csv_rows(
    handle: TextIO, file: Path, columns: list[Column], header: bool = True, delimiter: str = ","
) -> list[tuple[str | None, ...]]:
    """Rows of an open CSV checked against ``columns`` (see ``read_seed``)."""
    reader = csv.reader(handle, delimiter=delimiter)
    names = [c.name for c in columns]
    order = list(range(len(columns)))
    rows: list[tuple[str | None, ...]] = []
    line = 1  # where the next record starts (a quoted field may span lines)
    expect_header = header
    try:
        for record in reader:
            if expect_header:
                order = _header_order(record, names, file, line)
                expect_header = False
            elif record:  # blank lines are skipped, as Spark's CSV reader does
                rows.append(_checked_row(record, order, columns, file, line))
            line = reader.line_num + 1
    except csv.Error as exc:
        raise SeedError(f"not valid CSV: {exc}", file=file, line=reader.line_num) from exc
    return rows


def _header_order(record: list[str], names: list[str], file: Path, line: int) -> list[int]:
    """Position in the CSV of each declared column; the header must name them all, once."""
    header = [field.strip() for field in record]
    missing = [n for n in names if n not in header]
    extra = [h for h in header if h not in names]
    if missing or extra or len(header) != len(set(header)):
        raise SeedError(
            f"the header does not match the declared columns: missing {missing or 'none'}, "
            f"undeclared {extra or 'none'}",
            file=file,
            line=line,
            hint=f"declared columns: {', '.join(names)}",
        )
    return [header.index(n) for n in names]


def _checked_row(
    record: list[str], order: list[int], columns: list[Column], file: Path, line: int
) -> tuple[str | None, ...]:
    if len(record) != len(columns):
        raise SeedError(
            f"{len(record)} fields, but {len(columns)} columns are declared", file=file, line=line
        )
    values = []
    for position, column in zip(order, columns, strict=True):
        try:
            values.append(check_value(record[position], column))
        except ValueError as exc:
            raise SeedError(f"column '{column.name}': {exc}", file=file, line=line) from None
    return tuple(values)
