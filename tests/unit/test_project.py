"""Loading project.yml and streams/: validated specs, errors with file and line. No JVM."""

import subprocess
import sys
from pathlib import Path

import pytest

from runner.cli.options import parse_vars
from runner.errors import ConfigError
from runner.project import load

MODEL = "{{ config(stream='orders', target='silver.orders') }}\nSELECT 1;"


def test_example_project_loads(example_project: Path) -> None:
    project = load(example_project)
    assert project.name == "orders_demo"
    assert project.target.name == "local"
    assert project.target.master == "local[*]"
    assert project.target.warehouse == example_project / "target" / "local" / "warehouse"
    stream = project.streams["orders"]
    assert stream.format == "json"
    assert stream.options == {"maxFilesPerTrigger": "1"}
    assert stream.trigger.kind == "processing_time"
    model = project.model("orders_merge")
    assert model.config.unique_keys == ["order_id"]
    assert model.config.table_properties == {"delta.enableChangeDataFeed": "true"}


def test_unknown_target_lists_the_defined_ones(example_project: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(example_project, target="prod")
    assert "no target named 'prod'" in str(info.value)
    assert "local" in str(info.value.hint)


def test_unknown_model_lists_models(example_project: Path) -> None:
    with pytest.raises(ConfigError, match="orders_merge"):
        load(example_project).model("orders")


def test_missing_project_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no project.yml"):
        load(tmp_path)


def test_invalid_yaml_names_file_and_line(project_factory) -> None:
    root = project_factory(
        {"m": MODEL}, streams="streams:\n  orders:\n    format: json\n   bad: [\n"
    )
    with pytest.raises(ConfigError) as info:
        load(root)
    assert info.value.file == root / "streams" / "orders.yml"
    assert info.value.line == 4


@pytest.mark.parametrize(
    ("stream_yaml", "message", "line"),
    [
        ("streams:\n  orders:\n    format: avro\n", "format must be one of", 3),
        ("streams:\n  orders:\n    format: json\n    schema: 'a INT'\n", "needs 'path'", 3),
        ("streams:\n  orders:\n    format: json\n    path: x\n", "needs 'schema'", 3),
        ("streams:\n  orders:\n    format: rate\n    schema: 'a INT'\n", "fixed schema", 4),
        (
            "streams:\n  orders:\n    format: rate\n    trigger: sometimes\n",
            "trigger must be",
            4,
        ),
    ],
)
def test_stream_errors_name_the_line(project_factory, stream_yaml, message, line) -> None:
    root = project_factory({"m": MODEL}, streams=stream_yaml)
    with pytest.raises(ConfigError) as info:
        load(root)
    assert message in str(info.value)
    assert info.value.line == line


def test_rate_stream_has_fixed_schema_and_trigger(project_factory) -> None:
    streams = (
        "streams:\n  orders:\n    format: rate-micro-batch\n"
        "    options: {rowsPerBatch: 10}\n    trigger: available_now\n"
    )
    project = load(project_factory({"m": MODEL}, streams=streams))
    stream = project.streams["orders"]
    assert stream.columns_ddl == "timestamp TIMESTAMP, value BIGINT"
    assert stream.options == {"rowsPerBatch": "10"}
    assert stream.trigger.kind == "available_now"


def test_parse_vars() -> None:
    assert parse_vars("{day: 2024-01-02, n: 3}") == {
        "day": __import__("datetime").date(2024, 1, 2),
        "n": 3,
    }
    assert parse_vars(None) == {}
    with pytest.raises(ConfigError, match="mapping"):
        parse_vars("[1, 2]")


def test_pure_half_never_imports_pyspark(example_project: Path) -> None:
    code = (
        "import sys; from runner.project import load; from runner.model_sql import compile_batch;"
        f"p = load({str(example_project)!r}); compile_batch(p, p.model('orders_merge'), 1);"
        "assert 'pyspark' not in sys.modules, 'pyspark was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_once_trigger_runs_as_available_now_with_a_warning(project_factory) -> None:
    streams = "streams:\n  orders:\n    format: rate\n    trigger: once\n"
    project = load(project_factory({"m": MODEL}, streams=streams))
    assert project.streams["orders"].trigger.kind == "available_now"
    (warning,) = project.warnings
    assert "orders.yml:4" in warning and "deprecated" in warning


def test_delta_ref_stream_has_the_upstream_columns_plus_cdf(example_project: Path) -> None:
    project = load(example_project)
    stream = project.streams["order_changes"]
    assert (stream.format, stream.ref, stream.change_data_feed) == ("delta", "orders_merge", True)
    ddl = project.stream_columns_ddl(stream)
    assert ddl is not None and ddl.startswith("order_id STRING, customer_id STRING")
    assert ddl.endswith("_change_type STRING, _commit_version BIGINT, _commit_timestamp TIMESTAMP")


@pytest.mark.parametrize(
    ("stream_yaml", "message"),
    [
        ("streams:\n  orders:\n    format: delta\n", "exactly one of 'path', 'table' or 'ref'"),
        (
            "streams:\n  orders:\n    format: delta\n    path: x\n    table: s.t\n",
            "exactly one of",
        ),
        ("streams:\n  orders:\n    format: delta\n    ref: ghost\n", "ref: ghost names no model"),
    ],
)
def test_delta_stream_errors(project_factory, stream_yaml, message) -> None:
    with pytest.raises(ConfigError, match=message):
        load(project_factory({"m": MODEL}, streams=stream_yaml))


def test_target_column_names_come_from_columns_else_the_stream(project_factory) -> None:
    declared = (
        "{{ config(stream='orders', target='silver.a', columns='`order id` STRING, "
        "amount DECIMAL(10,2)') }}\nSELECT 1;"
    )
    rate = "streams:\n  orders:\n    format: rate\n  ticks:\n    format: delta\n    table: s.t\n"
    unknown = "{{ config(stream='ticks', target='silver.c') }}\nSELECT 1;"
    project = load(project_factory({"a": declared, "b": MODEL, "c": unknown}, streams=rate))
    assert project.target_column_names(project.model("a")) == ["`order id`", "amount"]
    assert project.target_column_names(project.model("b")) == ["timestamp", "value"]
    assert project.target_column_names(project.model("c")) == []  # a table's columns: unknown


@pytest.mark.parametrize(
    ("models", "streams", "expected"),
    [
        (
            {"m": MODEL},
            "streams:\n  orders:\n    format: avro\n",
            "format must be one of json, csv, parquet, rate, rate-micro-batch, kafka, delta, "
            "got 'avro'",
        ),
        (
            {"m": "{{ config(stream='orders', target='s.t', schema_drift='sometimes') }}"},
            None,
            "schema_drift must be one of fail, append_new_columns, evolve, got 'sometimes'",
        ),
        (
            {"m": "{{ config(stream='orders', target='s.t', expectations={'a': "
             "{'expect': 'x > 0', 'on_violation': 'skip'}}) }}"},
            None,
            "on_violation must be one of warn, drop, quarantine, fail, got 'skip'",
        ),
    ],
)  # fmt: skip
def test_a_value_outside_a_fixed_set_names_every_choice(
    project_factory, models: dict[str, str], streams: str | None, expected: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load(project_factory(models, streams=streams))
    assert expected in str(info.value)
