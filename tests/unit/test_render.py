"""Rendering models: contexts, macros (built-in and overridden), located errors. No JVM."""

from pathlib import Path

import pytest

from runner import project as project_loader
from runner.errors import ConfigError, TemplateError
from runner.model_sql import compile_batch, compile_setup, maintenance_due
from runner.secrets import redact
from runner.specs.model import ModelConfig
from runner.templating.batch_facts import BatchFacts, BatchStats
from runner.templating.context import (
    ColumnList,
    ParseRecord,
    Relation,
    TemplateInputs,
    parse_mode_context,
    template_context,
)

HEADER = "{{ config(stream='orders', target='silver.orders', unique_key='order_id') }}\n"


def load(root: Path, **kwargs):
    return project_loader.load(root, **kwargs)


def test_batch_context_names_render(project_factory) -> None:
    root = project_factory(
        {
            "m": HEADER + "SELECT {{ batch_id }} AS b, '{{ var('delete_op') }}' AS d "
            "FROM {{ batch }} JOIN {{ this }};"
        }
    )
    project = load(root)
    (statement,) = compile_batch(project, project.model("m"), batch_id=7)
    assert statement.sql == "SELECT 7 AS b, 'D' AS d FROM m__batch JOIN silver.orders"
    assert statement.line == 2
    assert statement.phase == "batch"


def test_cli_vars_override_project_vars(project_factory) -> None:
    root = project_factory({"m": HEADER + "SELECT '{{ var('delete_op') }}';"})
    project = load(root, cli_vars={"delete_op": "X"})
    assert compile_batch(project, project.model("m"), 0)[0].sql == "SELECT 'X'"


def test_env_var_with_and_without_default(project_factory, monkeypatch) -> None:
    monkeypatch.setenv("RUNNER_TEST_REGION", "eu")
    root = project_factory(
        {
            "m": HEADER
            + "SELECT '{{ env_var('RUNNER_TEST_REGION') }}', '{{ env_var('NOPE_X', 'd') }}';"
        }
    )
    project = load(root)
    statement = compile_batch(project, project.model("m"), 0)[0]
    assert statement.executable == "SELECT 'eu', 'd'"  # what Spark receives
    # what is shown and written: the variables' names, not their values
    assert redact(statement.sql) == "SELECT 'env_var('RUNNER_TEST_REGION')', 'env_var('NOPE_X')'"


def test_dedupe_macro_keeps_stream_columns_and_latest_row(project_factory) -> None:
    root = project_factory(
        {"m": HEADER + "{{ dedupe(batch, key=['order_id'], order_by='updated_at DESC') }};"}
    )
    project = load(root)
    sql = compile_batch(project, project.model("m"), 0)[0].sql
    # a JSON stream's batches carry _rescued_data (fields the schema does not declare)
    assert sql.startswith(
        "SELECT order_id, customer_id, status, amount, updated_at, op, _rescued_data\nFROM ("
    )
    # ties on updated_at are broken by the other columns, so the kept row is deterministic
    assert (
        "ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY updated_at DESC, customer_id, status, "
        "amount, updated_at, op, _rescued_data)" in sql
    )
    assert sql.endswith("WHERE __row_number = 1")


def test_project_macro_overrides_builtin(project_factory) -> None:
    override = (
        "{% macro dedupe(relation, key, order_by) %}"
        "SELECT DISTINCT * FROM {{ relation }}{% endmacro %}"
    )
    root = project_factory(
        {"m": HEADER + "{{ dedupe(batch, key='order_id', order_by='x') }};"},
        macros={"dedupe": override},
    )
    project = load(root)
    assert compile_batch(project, project.model("m"), 0)[0].sql == "SELECT DISTINCT * FROM m__batch"


def test_maintenance_runs_after_every_nth_batch(project_factory) -> None:
    root = project_factory(
        {
            "m": "{{ config(stream='orders', target='s.t', optimize_every=3, "
            "zorder_by=['customer_id']) }}\nSELECT 1;"
        }
    )
    project = load(root)
    model = project.model("m")
    assert [b for b in range(9) if maintenance_due(model, b)] == [2, 5, 8]
    statements = compile_batch(project, model, 2)
    assert [s.phase for s in statements] == ["batch", "maintenance"]
    assert statements[-1].sql == "OPTIMIZE s.t ZORDER BY (customer_id)"


def test_setup_creates_target_with_properties_and_location(project_factory) -> None:
    root = project_factory(
        {
            "m": "{{ config(stream='orders', target='silver.orders', "
            "columns='order_id STRING, amount DECIMAL(10,2)', partitioned_by='order_id', "
            "table_properties={'delta.enableChangeDataFeed': true}) }}\nSELECT 1;"
        }
    )
    project = load(root)
    setup = compile_setup(project, project.model("m"))
    assert setup.create_schema.sql == "CREATE SCHEMA IF NOT EXISTS silver"
    location = root / "target" / "warehouse" / "silver" / "orders"
    assert setup.create.sql == (
        "CREATE TABLE IF NOT EXISTS silver.orders (\n"
        "  order_id STRING,\n  amount DECIMAL(10,2)\n)\n"
        f"USING DELTA\nPARTITIONED BY (order_id)\nLOCATION '{location}'\n"
        "TBLPROPERTIES (\n  'delta.enableChangeDataFeed' = 'true'\n)"
    )
    assert (
        setup.attach.sql
        == f"CREATE TABLE IF NOT EXISTS silver.orders USING DELTA LOCATION '{location}'"
    )


def test_example_project_compiles(example_project) -> None:
    project = load(example_project)
    statements = compile_batch(project, project.model("orders_merge"), batch_id=1)
    assert [s.keyword for s in statements] == ["CREATE", "MERGE", "OPTIMIZE"]
    merge = statements[1]
    assert merge.is_dml
    source = (example_project / "models" / "orders_merge.sql").read_text().splitlines()
    assert source[merge.line - 1].startswith("MERGE INTO {{ this }}")


# -- errors name the model file and line ----------------------------------------------------


def test_undefined_name_reports_model_line(project_factory) -> None:
    root = project_factory({"bad": HEADER + "\nSELECT 1;\nSELECT {{ no_such_thing }};\n"})
    with pytest.raises(TemplateError) as info:
        load(root)
    error = info.value
    assert error.file == root / "models" / "bad.sql"
    assert error.line == 4
    assert "no_such_thing" in str(error)
    assert "bad.sql:4" in str(error)


def test_jinja_syntax_error_reports_model_line(project_factory) -> None:
    root = project_factory({"bad": HEADER + "SELECT 1;\n{% if batch_id %}\nSELECT 2;\n"})
    with pytest.raises(TemplateError) as info:
        load(root)
    assert info.value.file == root / "models" / "bad.sql"
    assert "syntax" in info.value.message.lower()
    assert info.value.line is not None and info.value.line >= 3


def test_error_inside_macro_names_call_site_and_macro(project_factory) -> None:
    root = project_factory(
        {"bad": HEADER + "SELECT 1;\n{{ dedupe(batch, key=[], order_by='x') }};\n"}
    )
    with pytest.raises(TemplateError) as info:
        load(root)
    assert info.value.line == 3
    assert "dedupe(): 'key' must name at least one column" in str(info.value)
    assert "dedupe.sql" in str(info.value)


def test_unknown_config_key_is_a_config_error_with_line(project_factory) -> None:
    root = project_factory(
        {"bad": "\n\n{{ config(stream='orders', target='t', optimise_every=2) }}\n"}
    )
    with pytest.raises(ConfigError) as info:
        load(root)
    assert info.value.line == 3
    assert "optimise_every" in str(info.value)


def test_unknown_stream_is_a_config_error(project_factory) -> None:
    root = project_factory({"bad": "{{ config(stream='nope', target='t') }}\nSELECT 1;"})
    with pytest.raises(ConfigError, match="no such stream"):
        load(root)


def test_model_without_config_call(project_factory) -> None:
    root = project_factory({"bad": "SELECT 1;"})
    with pytest.raises(ConfigError, match="no \\{\\{ config"):
        load(root)


def test_ref_to_unknown_model_is_reported(project_factory) -> None:
    root = project_factory({"m": HEADER + "SELECT * FROM {{ ref('ghost') }};"})
    with pytest.raises(ConfigError, match="ref\\('ghost'\\)"):
        load(root)


def test_this_exposes_schema_and_identifier(project_factory) -> None:
    root = project_factory({"m": HEADER + "SELECT '{{ this.schema }}', '{{ this.identifier }}';"})
    project = load(root)
    assert compile_batch(project, project.model("m"), 0)[0].sql == "SELECT 'silver', 'orders'"


# -- the two contexts: parse mode (load, lint) and batch mode ---------------------------------

COLUMNS_MODEL = HEADER + (
    "SELECT '{{ batch_columns[0] }}' AS first, '{{ batch_columns[-1] }}' AS last, "
    "{{ batch_columns | length }} AS n, '{{ target_columns[0] }}' AS target_first;"
)
UNDECLARED_STREAM = "streams:\n  orders:\n    format: delta\n    table: bronze.orders\n"


def render_in_parse_mode(project, name: str) -> str:
    """What the model renders to when the project loads (the loader keeps only its config)."""
    context = parse_mode_context(
        name,
        ParseRecord(),
        project_vars=project.vars,
        target_name=project.target.name,
        stream_columns=project.stream_column_names,
    )
    return project.templates.render(project.template_name(project.model(name)), context).text


def test_batch_columns_index_and_length_in_parse_mode(project_factory) -> None:
    project = load(project_factory({"m": COLUMNS_MODEL}))  # loading renders in parse mode
    assert render_in_parse_mode(project, "m").strip() == (
        "SELECT 'order_id' AS first, '_rescued_data' AS last, 7 AS n, 'order_id' AS target_first;"
    )


def test_batch_columns_of_an_undeclared_stream_render_a_placeholder_in_parse_mode(
    project_factory,
) -> None:
    project = load(project_factory({"m": COLUMNS_MODEL}, streams=UNDECLARED_STREAM))
    assert render_in_parse_mode(project, "m").strip() == (
        "SELECT '*' AS first, '*' AS last, 1 AS n, '*' AS target_first;"
    )


def test_batch_columns_index_and_length_per_batch(project_factory) -> None:
    project = load(project_factory({"m": COLUMNS_MODEL}))
    model = project.model("m")
    assert compile_batch(project, model, 0)[0].sql == (
        "SELECT 'order_id' AS first, '_rescued_data' AS last, 7 AS n, 'order_id' AS target_first"
    )
    facts = BatchFacts(columns=("id", "v", "seq"), target_columns=("id", "v"))
    assert compile_batch(project, model, 0, facts)[0].sql == (
        "SELECT 'id' AS first, 'seq' AS last, 3 AS n, 'id' AS target_first"
    )


def test_column_list_reads_its_names_when_used() -> None:
    known: list[str] = []
    columns = ColumnList(lambda: known)
    assert (list(columns), len(columns), columns[0], str(columns)) == (["*"], 1, "*", "['*']")
    known += ["id", "v"]
    assert list(columns) == ["id", "v"] and len(columns) == 2
    assert (columns[0], columns[-1], columns[1:], columns[5]) == ("id", "v", ["v"], "*")
    assert "v" in columns and "x" not in columns
    assert columns + ["w"] == ["id", "v", "w"] and ["w"] + columns == ["w", "id", "v"]
    assert columns == ["id", "v"] and str(columns) == "['id', 'v']"


def test_both_modes_give_a_template_the_same_names() -> None:
    parse = parse_mode_context("m", ParseRecord(), project_vars={}, target_name="t")
    batch = template_context(
        TemplateInputs(
            model_name="m",
            config=ModelConfig(target="s.t"),
            this="s.t",
            batch_id=3,
            batch_view="m__batch",
            batch_columns=["id"],
            target_columns=["id"],
            batch_stats=BatchStats(None, measured=None),
            project_vars={},
            target_name="t",
            ref=Relation,
        )
    )
    assert parse.keys() == batch.keys()
