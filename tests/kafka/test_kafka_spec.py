"""Kafka streams in streams/*.yml: the options they stand for, and errors with file and line.
Pure Python: no JVM, no broker."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.errors import ConfigError
from runner.project import load

MODEL = "{{ config(stream='orders', target='silver.orders') }}\nSELECT 1;"
SCHEMA = "order_id STRING, amount DECIMAL(10,2), updated_at TIMESTAMP, op STRING"


def kafka_yaml(**lines: str) -> str:
    body = {
        "format": "kafka",
        "bootstrap_servers": "localhost:9092",
        "topic": "orders",
        "value": f'{{format: json, schema: "{SCHEMA}", required: [order_id]}}',
        **lines,
    }
    return "streams:\n  orders:\n" + "".join(
        f"    {k}: {v}\n" for k, v in body.items() if v is not None
    )


def test_example_project_loads_its_kafka_stream_without_a_broker(example_project: Path) -> None:
    project = load(example_project)
    assert {"orders_merge", "orders_kafka_merge"} <= set(project.models)
    stream = project.stream_of(project.model("orders_kafka_merge"))
    assert stream.format == "kafka"
    assert stream.kafka is not None and stream.kafka.required == ("order_id", "updated_at", "op")
    assert stream.columns_ddl is not None and stream.columns_ddl.startswith("order_id STRING")


def test_kafka_stream_stands_for_spark_source_options(project_factory) -> None:
    root = project_factory(
        {"m": MODEL},
        streams=kafka_yaml(
            topic=None,
            topics="[orders, returns]",
            starting_offsets='\'{"orders": {"0": 5}}\'',
            max_offsets_per_trigger="50",
            fail_on_data_loss="false",
            options="{kafka.security.protocol: PLAINTEXT}",
        ),
    )
    stream = load(root).streams["orders"]
    assert stream.kafka is not None
    assert stream.kafka.source_options() == {
        "kafka.bootstrap.servers": "localhost:9092",
        "subscribe": "orders,returns",
        "startingOffsets": '{"orders": {"0": 5}}',
        "maxOffsetsPerTrigger": "50",
        "failOnDataLoss": "false",
    }
    assert stream.options == {"kafka.security.protocol": "PLAINTEXT"}
    assert stream.schema == SCHEMA


def test_pattern_and_offsets_mapping(project_factory) -> None:
    root = project_factory(
        {"m": MODEL},
        streams=kafka_yaml(
            topic=None, pattern="'orders\\..*'", starting_offsets="{orders: {0: 7}}"
        ),
    )
    options = load(root).streams["orders"].kafka.source_options()
    assert options["subscribePattern"] == "orders\\..*"
    assert "subscribe" not in options
    assert options["startingOffsets"] == '{"orders":{"0":7}}'


@pytest.mark.parametrize(
    ("changes", "message", "line"),
    [
        ({"bootstrap_servers": None}, "needs 'bootstrap_servers'", 3),
        ({"topic": None}, "exactly one of 'topic', 'topics' or 'pattern'", 3),
        ({"pattern": "'o.*'"}, "got topic and pattern", 7),
        ({"topics": "[]", "topic": None}, "'topics' must be a list", 6),
        ({"max_offsets_per_trigger": "0"}, "must be a positive integer", 7),
        ({"fail_on_data_loss": "maybe"}, "must be true or false", 7),
        ({"starting_offsets": "yesterday"}, "starting_offsets must be earliest", 7),
        ({"value": None}, "needs 'value'", 3),
        ({"value": "'{format: avro, schema: \"a INT\"}'"}, "must be a mapping", 6),
        ({"value": '{format: avro, schema: "a INT"}'}, "value.format must be one of json", 6),
        ({"value": "{format: json}"}, "value.schema must be a DDL string", 6),
        ({"value": '{schema: "a INT", required: [b]}'}, "not in the schema: b", 6),
        ({"value": '{schema: "a INT, kafka_offset INT"}'}, "may not declare kafka_offset", 6),
        ({"value": '{schema: "a INT", typo: 1}'}, "value: unknown key 'typo'", 6),
        ({"schema": "'a INT'"}, "under 'value:", 7),
        ({"path": "landing"}, "not a 'path'", 7),
        ({"options": "{subscribe: other}"}, "set 'topic / topics' instead", 7),
    ],
)
def test_invalid_kafka_stream_names_file_and_line(project_factory, changes, message, line) -> None:
    root = project_factory({"m": MODEL}, streams=kafka_yaml(**changes))
    with pytest.raises(ConfigError) as info:
        load(root)
    assert message in str(info.value)
    assert info.value.file == root / "streams" / "orders.yml"
    assert info.value.line == line
