"""The Kafka section of a stream in streams/*.yml, validated into a ``KafkaSpec``.

Pure Python, like the rest of project loading::

    streams:
      orders_kafka:
        format: kafka
        bootstrap_servers: localhost:9092
        topic: orders                 # or topics: [a, b], or pattern: 'orders\\..*'
        starting_offsets: earliest    # earliest | latest | {"orders": {"0": 42}}
        max_offsets_per_trigger: 500  # optional: at most this many records per micro-batch
        fail_on_data_loss: true       # optional, Spark's default
        value:
          format: json
          schema: "order_id STRING, amount DECIMAL(10,2), updated_at TIMESTAMP, op STRING"
          required: [order_id, updated_at]   # optional: null or missing -> quarantine
        options:                      # anything else, passed to Spark's Kafka source as is
          kafka.security.protocol: PLAINTEXT
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from runner.choices import is_one_of
from runner.ddl import DdlTypeError, check_column_types, column_names
from runner.errors import ConfigError
from runner.yaml_loader import YamlMap, check_keys

KafkaValueFormat = Literal["json"]
VALUE_FORMATS: tuple[KafkaValueFormat, ...] = get_args(KafkaValueFormat)
# The columns a Kafka batch carries next to the value's own columns.
KAFKA_COLUMNS = ("kafka_key", "kafka_topic", "kafka_partition", "kafka_offset", "kafka_timestamp")
# The same columns as DDL: what a Kafka micro-batch has next to its value's columns.
KAFKA_COLUMNS_DDL = (
    "kafka_key STRING, kafka_topic STRING, kafka_partition INT, kafka_offset BIGINT, "
    "kafka_timestamp TIMESTAMP"
)
KAFKA_KEYS = (
    "bootstrap_servers",
    "topic",
    "topics",
    "pattern",
    "starting_offsets",
    "max_offsets_per_trigger",
    "fail_on_data_loss",
    "value",
)
# Spark options that the YAML keys above set; naming them under `options` too is a mistake.
_OWNED_OPTIONS = {
    "kafka.bootstrap.servers": "bootstrap_servers",
    "subscribe": "topic / topics",
    "subscribePattern": "pattern",
    "assign": "topic / topics",
    "startingOffsets": "starting_offsets",
    "maxOffsetsPerTrigger": "max_offsets_per_trigger",
    "failOnDataLoss": "fail_on_data_loss",
}


@dataclass(frozen=True)
class KafkaSpec:
    """Where a Kafka stream reads from and how its values are parsed."""

    bootstrap_servers: str
    topics: tuple[str, ...] = ()
    pattern: str | None = None
    starting_offsets: str = "earliest"
    max_offsets_per_trigger: int | None = None
    fail_on_data_loss: bool = True
    value_format: KafkaValueFormat = "json"
    value_schema: str = ""
    required: tuple[str, ...] = ()

    def source_options(self) -> dict[str, str]:
        """The options of ``spark.readStream.format('kafka')`` this spec stands for."""
        options = {
            "kafka.bootstrap.servers": self.bootstrap_servers,
            "startingOffsets": self.starting_offsets,
            "failOnDataLoss": str(self.fail_on_data_loss).lower(),
        }
        if self.pattern is not None:
            options["subscribePattern"] = self.pattern
        else:
            options["subscribe"] = ",".join(self.topics)
        if self.max_offsets_per_trigger is not None:
            options["maxOffsetsPerTrigger"] = str(self.max_offsets_per_trigger)
        return options


def build_kafka_spec(name: str, raw: YamlMap, file: Path, options: dict[str, str]) -> KafkaSpec:
    """Validate the Kafka keys of stream ``name``; every error names the file and line."""

    def fail(message: str, key: str | None = None, hint: str | None = None) -> ConfigError:
        line = raw.line_of(key) if key else raw.line
        return ConfigError(f"stream '{name}': {message}", file=file, line=line, hint=hint)

    servers = raw.get("bootstrap_servers")
    if not isinstance(servers, str) or not servers.strip():
        raise fail(
            "a kafka source needs 'bootstrap_servers' (host:port[,host:port])",
            "bootstrap_servers",
            hint="for the local broker: bootstrap_servers: localhost:9092",
        )
    topics, pattern = _subscription(raw, fail)
    if raw.get("path"):
        raise fail("a kafka source reads topics, not a 'path'; remove it", "path")
    if raw.get("schema"):
        raise fail(
            "put the schema of a kafka source's values under 'value: {format: json, schema: ...}'",
            "schema",
        )
    for option, key in _OWNED_OPTIONS.items():
        if option in options:
            raise fail(f"set '{key}' instead of the option '{option}'", "options")
    value_format, schema, required = _value(raw, fail)
    return KafkaSpec(
        bootstrap_servers=servers.strip(),
        topics=topics,
        pattern=pattern,
        starting_offsets=_starting_offsets(raw, fail),
        max_offsets_per_trigger=_positive_int(raw, "max_offsets_per_trigger", fail),
        fail_on_data_loss=_boolean(raw, "fail_on_data_loss", True, fail),
        value_format=value_format,
        value_schema=schema,
        required=required,
    )


def _subscription(raw: YamlMap, fail: Any) -> tuple[tuple[str, ...], str | None]:
    given = [key for key in ("topic", "topics", "pattern") if raw.get(key) is not None]
    if len(given) != 1:
        where = given[1] if len(given) > 1 else None
        raise fail(
            "a kafka source needs exactly one of 'topic', 'topics' or 'pattern'"
            + (f", got {' and '.join(given)}" if given else ""),
            where,
        )
    key = given[0]
    value = raw[key]
    if key == "topic":
        if not isinstance(value, str) or not value.strip():
            raise fail("'topic' must be a topic name", key)
        return (value.strip(),), None
    if key == "topics":
        if isinstance(value, str):
            value = [t.strip() for t in value.split(",")]
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(t, str) and t.strip() for t in value)
        ):
            raise fail("'topics' must be a list of topic names", key)
        return tuple(t.strip() for t in value), None
    if not isinstance(value, str) or not value:
        raise fail("'pattern' must be a Java regular expression of topic names", key)
    return (), value


def _starting_offsets(raw: YamlMap, fail: Any) -> str:
    value = raw.get("starting_offsets", "earliest")
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))  # {"topic": {"0": 42}} per partition
    if value in ("earliest", "latest") or (isinstance(value, str) and value.startswith("{")):
        return value
    raise fail(
        f"starting_offsets must be earliest, latest or a mapping of offsets, got {value!r}",
        "starting_offsets",
    )


def _positive_int(raw: YamlMap, key: str, fail: Any) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise fail(f"'{key}' must be a positive integer, got {value!r}", key)
    return value


def _boolean(raw: YamlMap, key: str, default: bool, fail: Any) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise fail(f"'{key}' must be true or false, got {value!r}", key)
    return value


def _value(raw: YamlMap, fail: Any) -> tuple[KafkaValueFormat, str, tuple[str, ...]]:
    example = 'value: {format: json, schema: "order_id STRING, amount DECIMAL(10,2)"}'
    if "value" not in raw:
        raise fail("a kafka source needs 'value' with its format and schema", hint=example)
    value = raw["value"]
    if not isinstance(value, YamlMap):
        raise fail("'value' must be a mapping with 'format' and 'schema'", "value", example)
    check_keys(value, ("format", "schema", "required"), "value")
    value_format = value.get("format", "json")
    if not is_one_of(value_format, VALUE_FORMATS):
        raise ConfigError(
            f"value.format must be one of {', '.join(VALUE_FORMATS)}, got {value_format!r}",
            file=value.file,
            line=value.line_of("format"),
        )
    schema = value.get("schema")
    if not isinstance(schema, str) or not schema.strip():
        raise ConfigError(
            'value.schema must be a DDL string, for example "order_id STRING, amount INT"',
            file=value.file,
            line=value.line_of("schema") if "schema" in value else value.line,
        )
    try:
        check_column_types(schema)
    except DdlTypeError as exc:
        raise ConfigError(
            f"value.schema: {exc}", file=value.file, line=value.line_of("schema")
        ) from None
    names = [n.strip("`") for n in column_names(schema)]
    clash = sorted(set(names) & set(KAFKA_COLUMNS))
    if clash:
        raise ConfigError(
            f"value.schema may not declare {', '.join(clash)}: the kafka source adds these",
            file=value.file,
            line=value.line_of("schema"),
        )
    required = value.get("required") or []
    if isinstance(required, str):
        required = [required]
    missing = [r for r in required if r not in names] if isinstance(required, list) else None
    if missing is None or missing:
        raise ConfigError(
            "value.required must list columns of value.schema"
            + (f"; not in the schema: {', '.join(map(str, missing))}" if missing else ""),
            file=value.file,
            line=value.line_of("required"),
        )
    return value_format, " ".join(schema.split()), tuple(required)
