"""Load streams/*.yml into StreamSpecs. Pure Python; errors name the file and line.

Formats: json / csv / parquet files (a path and a schema), ``rate`` and ``rate-micro-batch``
(fixed schema), ``kafka`` (see runner/specs/kafka.py) and ``delta``: a Delta table by ``path`` or
``table``, or the target of another model by ``ref``, optionally as its Change Data Feed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from runner.choices import is_one_of
from runner.ddl import DdlTypeError, check_column_types
from runner.errors import ConfigError
from runner.object_paths import is_object_uri
from runner.secrets import render_env_vars
from runner.specs.kafka import KAFKA_KEYS, build_kafka_spec
from runner.specs.stream import (
    DELTA_FORMAT,
    FILE_FORMATS,
    FIXED_SCHEMAS,
    KAFKA_FORMAT,
    SOURCE_FORMATS,
    StreamSpec,
    TriggerSpec,
)
from runner.yaml_loader import YamlMap, check_keys, load_yaml, untemplated


def load_streams(stream_dir: Path, root: Path) -> tuple[dict[str, StreamSpec], list[str]]:
    """Every stream declared under ``stream_dir``, and warnings (deprecations) to show."""
    streams: dict[str, StreamSpec] = {}
    warnings: list[str] = []
    files = sorted([*stream_dir.glob("*.yml"), *stream_dir.glob("*.yaml")])
    for file in files if stream_dir.is_dir() else []:
        doc = load_yaml(file)
        check_keys(doc, ("streams",), file.name)
        declared = doc.child("streams")
        for name, raw in declared.items():
            if name in streams:
                raise ConfigError(
                    f"stream '{name}' is declared twice (also in {streams[name].file})",
                    file=file,
                    line=declared.line_of(name),
                )
            if not isinstance(raw, YamlMap):
                raise ConfigError(
                    f"stream '{name}' must be a mapping", file=file, line=declared.line_of(name)
                )
            streams[name] = _stream_spec(name, raw, file, root, warnings)
    return streams, warnings


def _stream_spec(
    name: str, raw: YamlMap, file: Path, root: Path, warnings: list[str]
) -> StreamSpec:
    fmt = raw.get("format")
    if not is_one_of(fmt, SOURCE_FORMATS):
        raise ConfigError(
            f"stream '{name}': format must be one of {', '.join(SOURCE_FORMATS)}, got {fmt!r}",
            file=file,
            line=raw.line_of("format"),
        )
    check_keys(raw, stream_keys(fmt), f"stream '{name}' ({fmt})")
    path = untemplated(raw, "path", "", "a path relative to the project, or absolute") or None
    if fmt in FILE_FORMATS and not path:
        raise ConfigError(f"stream '{name}': a {fmt} source needs 'path'", file=file, line=raw.line)
    if path and is_object_uri(str(path)):
        # a stream's path is a directory on this machine (made absolute against the project)
        raise ConfigError(
            f"stream '{name}': path {path} is on object storage; a stream's path is a local "
            "directory (relative to the project, or absolute): object storage is not supported "
            "there yet",
            file=file,
            line=raw.line_of("path"),
            hint="on a cluster, land the files on a mount every worker sees; a Delta source "
            "on object storage can be read by 'table:' or 'ref:'; or read the events from Kafka",
        )
    schema = raw.get("schema")
    if fmt in FILE_FORMATS and not schema:
        raise ConfigError(
            f"stream '{name}': a {fmt} source needs 'schema' as a DDL string, "
            'for example "order_id STRING, amount DECIMAL(10,2)"',
            file=file,
            line=raw.line,
        )
    if fmt in FIXED_SCHEMAS and schema:
        raise ConfigError(
            f"stream '{name}': the {fmt} source has a fixed schema ({FIXED_SCHEMAS[fmt]}); "
            "remove 'schema'",
            file=file,
            line=raw.line_of("schema"),
        )
    if fmt == DELTA_FORMAT:
        _check_delta_source(name, raw, file)
    if schema and fmt != KAFKA_FORMAT:
        _check_schema(name, str(schema), file, raw.line_of("schema"))
    declared = raw.child("options")
    options = {
        str(k): render_env_vars(
            conf_value(v), what=f"stream '{name}' option {k}", file=file, line=declared.line_of(k)
        )
        for k, v in declared.items()
    }
    kafka = build_kafka_spec(name, raw, file, options) if fmt == KAFKA_FORMAT else None
    if kafka is not None:
        schema = kafka.value_schema
    return StreamSpec(
        name=name,
        file=file,
        line=raw.line,
        format=fmt,
        path=(root / str(path)).resolve() if path else None,
        schema=str(schema) if schema else None,
        options=options,
        trigger=_trigger_spec(name, raw, file, warnings),
        kafka=kafka,
        table=str(raw["table"]) if raw.get("table") else None,
        ref=str(raw["ref"]) if raw.get("ref") else None,
        change_data_feed=bool(raw.get("change_data_feed", False)),
        description=_description(name, raw, file),
        option_lines={str(k): declared.line_of(k) for k in declared},
    )


def _description(name: str, raw: YamlMap, file: Path) -> str:
    value = raw.get("description")
    if value is not None and not isinstance(value, str):
        raise ConfigError(
            f"stream '{name}': description must be text", file=file, line=raw.line_of("description")
        )
    return (value or "").strip()


def _check_schema(name: str, schema: str, file: Path, line: int) -> None:
    """A declared schema names only Spark's types (``BIGINTT`` fails here, not in a batch)."""
    try:
        check_column_types(schema)
    except DdlTypeError as exc:
        raise ConfigError(f"stream '{name}': schema: {exc}", file=file, line=line) from None


def stream_keys(fmt: str) -> tuple[str, ...]:
    """The keys a stream of format ``fmt`` may set."""
    common = ("format", "options", "trigger", "description")
    if fmt in FILE_FORMATS:
        return (*common, "path", "schema")
    if fmt == DELTA_FORMAT:
        return (*common, "path", "table", "ref", "change_data_feed")
    if fmt == KAFKA_FORMAT:  # path and schema: the Kafka spec says where they belong instead
        return (*common, *KAFKA_KEYS, "path", "schema")
    return (*common, "schema")  # rate: its fixed schema is explained when one is given


def _check_delta_source(name: str, raw: YamlMap, file: Path) -> None:
    given = [key for key in ("path", "table", "ref") if raw.get(key)]
    if len(given) != 1:
        raise ConfigError(
            f"stream '{name}': a delta source needs exactly one of 'path', 'table' or 'ref' "
            f"(got {', '.join(given) or 'none'})",
            file=file,
            line=raw.line,
            hint="ref: orders_merge reads that model's target; add change_data_feed: true "
            "to read its changes",
        )
    if not isinstance(raw.get("change_data_feed", False), bool):
        raise ConfigError(
            f"stream '{name}': change_data_feed must be true or false",
            file=file,
            line=raw.line_of("change_data_feed"),
        )


def _trigger_spec(name: str, raw: YamlMap, file: Path, warnings: list[str]) -> TriggerSpec:
    value = raw.get("trigger")
    line = raw.line_of("trigger")
    if value is None:
        return TriggerSpec()
    if value == "available_now" or (isinstance(value, YamlMap) and value.get("available_now")):
        return TriggerSpec(kind="available_now")
    if value == "once" or (isinstance(value, YamlMap) and value.get("once")):
        warnings.append(
            f"{file}:{line}: stream '{name}': trigger 'once' is deprecated in Spark; it runs as "
            "'available_now' (same data, split into batches by the source's rate limits)"
        )
        return TriggerSpec(kind="available_now")
    if isinstance(value, YamlMap) and "processing_time" in value:
        interval = str(value["processing_time"])
        problem = processing_time_problem(interval)
        if problem:
            raise ConfigError(
                f"stream '{name}': trigger processing_time {interval!r}: {problem}",
                file=file,
                line=value.line_of("processing_time"),
                hint="for example: 5 seconds, 1 minute, 500 milliseconds, 1 minute 30 seconds",
            )
        return TriggerSpec(kind="processing_time", interval=interval)
    raise ConfigError(
        f"stream '{name}': trigger must be 'available_now' or {{processing_time: '10 seconds'}}",
        file=file,
        line=line,
    )


# Spark's interval units (IntervalUtils.stringToInterval), each optionally plural. A trigger
# takes no month or year (ProcessingTimeTrigger); only seconds take a fraction.
_INTERVAL_UNITS = ("week", "day", "hour", "minute", "second", "millisecond", "microsecond")
_INTERVAL_PART = re.compile(r"([+-]?)(\d+(?:\.\d*)?|\.\d+)\s+([a-z]+)")


def processing_time_problem(interval: str) -> str | None:
    """Why Spark would refuse ``interval`` as ``trigger(processingTime=...)``, or None.

    As Spark reads it (``stringToInterval``, case-insensitive, an optional ``interval``
    prefix): one or more ``<number> <unit>`` pairs such as ``1 minute 30 seconds``; no months
    or years; a fraction only on seconds (``1.5 seconds``); not negative in total."""
    text = " ".join(interval.lower().split())
    if text.startswith("interval "):
        text = text[len("interval ") :]
    if not text:
        return "no interval given"
    position, total = 0, 0.0
    seconds = {"week": 604800.0, "day": 86400.0, "hour": 3600.0, "minute": 60.0, "second": 1.0}
    seconds |= {"millisecond": 1e-3, "microsecond": 1e-6}
    while position < len(text):
        part = _INTERVAL_PART.match(text, position)
        if part is None:
            return f"expected '<number> <unit>' at '{text[position:]}'"
        sign, number, unit = part.groups()
        singular = unit[:-1] if unit.endswith("s") else unit
        if singular in ("month", "year"):
            return "a trigger interval cannot be in months or years"
        if singular not in _INTERVAL_UNITS:
            return f"unknown unit '{unit}' (one of: {', '.join(_INTERVAL_UNITS)})"
        if "." in number and singular != "second":
            return f"only seconds can have a fraction, not '{number} {unit}'"
        total += (-1 if sign == "-" else 1) * float(number) * seconds[singular]
        position = part.end()
        if position < len(text) and text[position] != " ":
            return f"unexpected '{text[position:]}'"
        position += 1
    return "the interval is negative" if total < 0 else None


def conf_value(value: Any) -> str:
    """YAML scalars as Spark option strings: booleans are 'true' / 'false'."""
    return str(value).lower() if isinstance(value, bool) else str(value)
