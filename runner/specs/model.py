"""A model: its template, where it is, and its validated ``config(...)`` call.

Built by ``runner.project``; every validation error names the file and line it comes from.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, get_args

from runner.choices import is_one_of
from runner.ddl import DdlTypeError, check_column_types
from runner.errors import ConfigError
from runner.expectations import Expectation, parse_expectations
from runner.secrets import holds_secret
from runner.specs.target import split_table_name

# What a batch whose columns differ from the target's does (runner/spark/batch/schema_drift.py).
SchemaDriftPolicy = Literal["fail", "append_new_columns", "evolve"]
SCHEMA_DRIFT_POLICIES: tuple[SchemaDriftPolicy, ...] = get_args(SchemaDriftPolicy)


@dataclass(frozen=True)
class ModelConfig:
    """What a model's ``config(...)`` call may set. Unknown keys are errors (typos)."""

    stream: str | None = None
    target: str | None = None
    unique_key: str | list[str] | None = None
    sequence_by: str | list[str] | None = None  # a list orders as a struct (ties: next column)
    optimize_every: int | None = None
    zorder_by: list[str] = field(default_factory=list)
    table_properties: dict[str, str] = field(default_factory=dict)
    columns: str | None = None  # target schema as DDL; defaults to the stream's schema
    partitioned_by: list[str] = field(default_factory=list)
    cluster_by: list[str] = field(default_factory=list)  # liquid clustering (not with partitions)
    prune_by: list[str] = field(default_factory=list)  # batch ranges added to MERGE ON (merge())
    schema_drift: SchemaDriftPolicy | None = None  # None: no check
    tags: list[str] = field(default_factory=list)
    enabled: bool = True
    shared_target: bool = False  # another model writes the same target, and both say so
    expectations: tuple[Expectation, ...] = ()  # row checks with actions (runner/expectations.py)

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @property
    def unique_keys(self) -> list[str]:
        if self.unique_key is None:
            return []
        return [self.unique_key] if isinstance(self.unique_key, str) else list(self.unique_key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)


@dataclass(frozen=True)
class ModelSpec:
    """A model: its template, where it is, and its validated config."""

    name: str
    file: Path
    source: str
    config: ModelConfig
    config_line: int
    refs: tuple[str, ...] = ()
    config_lines: tuple[tuple[str, int], ...] = ()  # (config() argument, its line)

    def config_line_of(self, key: str) -> int:
        """The line of ``config(key=...)``, for errors about that argument."""
        return dict(self.config_lines).get(key, self.config_line)

    @property
    def target_table(self) -> str:
        assert self.config.target is not None  # validated at load time
        return self.config.target

    @property
    def batch_view(self) -> str:
        """The temp view name the micro-batch is registered under."""
        return f"{self.name}__batch"


def build_model_config(
    raw: dict[str, Any], *, file: Path, line: int, key_lines: dict[str, int] | None = None
) -> ModelConfig:
    """Validate the keyword arguments of a model's ``config(...)`` call. An error about one
    argument names its line (``key_lines``, from ``config_argument_lines``), else ``line``."""
    lines = key_lines or {}

    def at(key: str) -> int:
        return lines.get(key, line)

    known = ModelConfig.field_names()
    unknown = sorted(set(raw) - set(known), key=lambda k: (at(k), k))
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1, cutoff=0.6)
        raise ConfigError(
            f"unknown config key(s) {', '.join(unknown)} in config()"
            + (f" (did you mean '{close[0]}'?)" if close else ""),
            file=file,
            line=at(unknown[0]),
            hint=f"known keys: {', '.join(known)}",
        )
    for key, value in raw.items():
        if key != "table_properties" and holds_secret(value):
            raise ConfigError(
                f"config({key}=...): a value from env_var() is a secret, shown as "
                "env_var('NAME') wherever it is written; only table_properties may hold one",
                file=file,
                line=at(key),
                hint="for a setting that differs between environments use var('name') "
                "(project.yml vars:, --vars) or one target per environment",
            )
    values = dict(raw)
    for key in ("zorder_by", "partitioned_by", "cluster_by", "prune_by", "tags"):
        if isinstance(values.get(key), str):
            values[key] = [values[key]]
    _expect(values, "optimize_every", int, file, at("optimize_every"))
    if values.get("optimize_every") is not None and values["optimize_every"] < 1:
        raise ConfigError(
            "optimize_every must be a positive integer", file=file, line=at("optimize_every")
        )
    _expect(values, "table_properties", dict, file, at("table_properties"))
    if not isinstance(values.get("shared_target", False), bool):
        raise ConfigError(
            f"config key 'shared_target' must be true or false, got {values['shared_target']!r}",
            file=file,
            line=at("shared_target"),
        )
    drift = values.get("schema_drift")
    if drift is not None and not is_one_of(drift, SCHEMA_DRIFT_POLICIES):
        raise ConfigError(
            f"schema_drift must be one of {', '.join(SCHEMA_DRIFT_POLICIES)}, got {drift!r}",
            file=file,
            line=at("schema_drift"),
        )
    if values.get("cluster_by") and values.get("partitioned_by"):
        raise ConfigError(
            "config() sets both partitioned_by and cluster_by: a Delta table is either "
            "partitioned or liquid-clustered",
            file=file,
            line=max(at("cluster_by"), at("partitioned_by")),
        )
    if "table_properties" in values:
        values["table_properties"] = {
            str(k): _property_value(v) for k, v in values["table_properties"].items()
        }
    if values.get("columns") is not None:
        try:
            check_column_types(str(values["columns"]))
        except DdlTypeError as exc:
            raise ConfigError(f"columns: {exc}", file=file, line=at("columns")) from None
    for required in ("stream", "target"):
        if not values.get(required):
            raise ConfigError(
                f"config() must set '{required}'",
                file=file,
                line=line,
                hint="for example: {{ config(stream='orders', target='silver.orders', "
                "unique_key='order_id') }}",
            )
    try:
        split_table_name(values["target"])
    except ValueError as exc:
        raise ConfigError(str(exc), file=file, line=at("target")) from exc
    if values.get("expectations") is not None:
        values["expectations"] = parse_expectations(
            values["expectations"], file=file, line=at("expectations")
        )
    return ModelConfig(**values)


def config_argument_lines(source: str, start: int) -> dict[str, int]:
    """The line of each keyword argument of the ``config(`` call whose ``(`` is just before
    ``start`` in ``source``: ``{'stream': 2, 'target': 3, ...}``. Strings are skipped, so a
    ``=`` inside one is not an argument; nested brackets are not top-level arguments."""
    lines: dict[str, int] = {}
    depth, index, line = 1, start, source.count("\n", 0, start) + 1
    while index < len(source) and depth > 0:
        char = source[index]
        if char == "\n":
            line += 1
        elif char in "'\"":
            end = source.find(char, index + 1)
            end = len(source) if end < 0 else end
            line += source.count("\n", index, end)
            index = end
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 1 and (char.isalpha() or char == "_"):
            found = _KEYWORD.match(source, index)
            if found:
                lines.setdefault(found.group(1), line)
                index = found.end(1) - 1
        index += 1
    return lines


_KEYWORD = re.compile(r"([A-Za-z_]\w*)\s*=(?!=)")


def _property_value(value: Any) -> str:
    # Delta table properties are strings; YAML/Jinja booleans become 'true' / 'false'.
    return str(value).lower() if isinstance(value, bool) else str(value)


def _expect(values: dict[str, Any], key: str, kind: type, file: Path, line: int) -> None:
    value = values.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise ConfigError(
            f"config key '{key}' must be {kind.__name__}, got {value!r}", file=file, line=line
        )
