"""The built-in merge / scd2 / optimize macros: compiled SQL, argument errors, overrides, docs.
No JVM."""

from __future__ import annotations

import importlib.util
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner import project as project_loader
from runner.cli.app import app
from runner.errors import TemplateError
from runner.model_sql import compile_batch
from runner.templating.batch_facts import BatchFacts, ColumnStats, TypedLiteral, sql_literal

REPO = Path(__file__).resolve().parents[2]
CONFIG = (
    "{{ config(stream='orders', target='silver.orders', unique_key='order_id', "
    "sequence_by='updated_at', columns='order_id STRING, customer_id STRING, status STRING, "
    "amount DECIMAL(10,2), updated_at TIMESTAMP, is_deleted BOOLEAN'%s) }}\n"
)


def merge_sql(project_factory, call: str, extra_config: str = "", facts=None) -> str:
    return merge_sqls(project_factory, call, extra_config, facts)[0].sql


def merge_sqls(project_factory, call: str, extra_config: str = "", facts=None) -> list:
    root = project_factory({"m": CONFIG % extra_config + call + ";\n"})
    project = project_loader.load(root)
    return compile_batch(project, project.model("m"), 0, facts)


def test_merge_reads_config_and_guards_updates_and_deletes(project_factory) -> None:
    sql = merge_sql(project_factory, "{{ merge(delete_column='op') }}")
    assert sql.startswith("MERGE INTO silver.orders AS t\nUSING (\n")
    assert "ON t.order_id = s.order_id\n" in sql
    guard = "s.updated_at > t.updated_at"
    assert f"WHEN MATCHED AND {guard} AND coalesce(s.op IN ('D'), false) THEN DELETE" in sql
    assert f"WHEN MATCHED AND {guard} THEN UPDATE SET\n  t.customer_id = s.customer_id," in sql
    assert "t.order_id = s.order_id," not in sql  # keys are never updated
    assert "is_deleted" not in sql  # not in the batch: not written in hard-delete mode
    assert "WHEN NOT MATCHED AND NOT coalesce(s.op IN ('D'), false) THEN" in sql


@pytest.mark.parametrize(
    ("call", "present", "absent"),
    [
        ("merge(mode='insert_only')", ["WHEN NOT MATCHED THEN"], ["WHEN MATCHED"]),
        ("merge(mode='update_only')", ["WHEN MATCHED AND"], ["NOT MATCHED"]),
        (
            "merge(unique_key=['order_id', 'customer_id'], null_safe=true)",
            ["ON t.order_id <=> s.order_id\n  AND t.customer_id <=> s.customer_id"],
            [],
        ),
        (
            "merge(update_columns=['status'])",
            ["SET\n  t.status = s.status,\n  t.updated_at"],
            ["t.amount ="],
        ),
        ("merge(exclude_columns=['amount'])", ["t.status = s.status"], ["t.amount ="]),
        ("merge(match_condition='t.status <> s.status')", ["  AND (t.status <> s.status)"], []),
        (
            "merge(delete_column='op', deletes='tombstone')",
            ["t.is_deleted = coalesce(s.op IN ('D'), false)", "WHEN NOT MATCHED THEN"],
            ["THEN DELETE"],
        ),
        (
            "merge(sequence_by=['updated_at', 'amount'])",
            [
                "WHEN MATCHED AND struct(s.updated_at, s.amount) > struct(t.updated_at, t.amount)",
                "ORDER BY updated_at DESC, amount DESC, customer_id",
                "t.amount = s.amount",
            ],
            [],
        ),
        ("merge(except_columns=['status'])", ["t.amount = s.amount"], ["t.status", "s.status"]),
        (
            "merge(ignore_null_updates=true)",
            [
                # the fold reads the target: only events newer than its row count
                "WHERE __target.__in_target IS NULL OR b.updated_at > __target.updated_at",
                "last_value(CASE WHEN NOT __is_delete THEN status END, true) OVER __events",
                "t.status = s.status",
            ],
            ["coalesce(s.updated_at", "coalesce(s.status, t.status)"],
        ),
        (
            "merge(ignore_null_updates=true, deduplicate=false)",
            ["t.status = coalesce(s.status, t.status)"],
            ["__events"],
        ),
        (
            "merge(truncate_when=\"status = 'T'\")",
            [
                "ON true\nWHEN MATCHED THEN DELETE;",
                "WHERE NOT coalesce(status = 'T', false)",
                "updated_at > (SELECT max(updated_at) FROM m__batch WHERE status = 'T')",
            ],
            [],
        ),
    ],
)
def test_merge_options_compile(project_factory, call, present, absent) -> None:
    sql = ";\n".join(s.sql for s in merge_sqls(project_factory, "{{ " + call + " }}"))
    for text in present:
        assert text in sql
    for text in absent:
        assert text not in sql


def test_prune_by_renders_markers_at_compile_time_and_literals_for_a_batch(
    project_factory,
) -> None:
    call, extra = "{{ merge() }}", ", prune_by=['order_id', 'updated_at']"
    compiled = merge_sql(project_factory, call, extra)
    assert "  AND t.order_id BETWEEN :order_id__min AND :order_id__max\n" in compiled
    facts = BatchFacts(
        columns=("order_id", "customer_id", "status", "amount", "updated_at", "op"),
        target_columns=("order_id", "customer_id", "status", "amount", "updated_at"),
        stats={
            "order_id": ColumnStats("o1", "o'9", null_count=2),
            "updated_at": ColumnStats(
                TypedLiteral("TIMESTAMP", "2024-01-01 10:00:00"),
                TypedLiteral("TIMESTAMP", "2024-01-02 00:00:00"),
            ),
        },
    )
    running = merge_sql(project_factory, call, extra, facts)
    assert "AND (t.order_id BETWEEN 'o1' AND 'o\\'9' OR t.order_id IS NULL)" in running
    assert (
        "AND t.updated_at BETWEEN TIMESTAMP '2024-01-01 10:00:00' AND "
        "TIMESTAMP '2024-01-02 00:00:00'" in running
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("merge(unique_key='nope')", "merge(): 'nope' (unique_key / sequence_by) is not a column"),
        ("merge(mode='upsertt')", "mode must be 'upsert', 'insert_only' or 'update_only'"),
        ("merge(deletes='tombstone')", "needs delete_column and sequence_by"),
        ("merge(delete_column='kind')", "delete_column 'kind' is not a column of m__batch"),
        ("merge(update_columns=['colour'])", "name 'colour', not a column of silver.orders"),
        ("merge(prune_by=['order_id'])", "batch_stats: column 'order_id' is not measured"),
        ("scd2()", "scd2(): silver.orders has no column 'valid_from'"),
        ("merge(except_columns=['order_id'])", "except_columns names 'order_id', a unique_key"),
        (
            "merge(truncate_when='x', sequence_by=[], deduplicate=false)",
            "truncate_when=...) needs sequence_by",
        ),
        ("optimize(every=0)", "optimize(): 'every' must be a positive integer"),
    ],
)
def test_macro_argument_errors_are_precise(project_factory, call, message) -> None:
    root = project_factory({"m": CONFIG % "" + "{{ " + call + " }};\n"})
    with pytest.raises(TemplateError) as error:
        project = project_loader.load(root)
        compile_batch(project, project.model("m"), 0)
    assert message in str(error.value)
    assert error.value.line == 2


def test_project_merge_macro_overrides_builtin_in_runner_compile(project_factory) -> None:
    model = {"m": CONFIG % "" + "{{ merge(delete_column='op') }};\n"}
    plain = project_factory(model)
    override = project_factory(
        model,
        macros={
            "merge": "{% macro merge(delete_column=none) %}"
            "MERGE INTO {{ this }} AS t USING {{ batch }} AS s ON t.order_id = s.order_id "
            "WHEN MATCHED THEN DELETE{% endmacro %}"
        },
    )
    compiled = {}
    for name, root in (("builtin", plain), ("override", override)):
        result = CliRunner().invoke(app, ["compile", "--project-dir", str(root)])
        assert result.exit_code == 0, result.output
        compiled[name] = (root / "target" / "compiled" / "m.sql").read_text()
    assert "WHEN NOT MATCHED AND NOT coalesce(s.op IN ('D'), false)" in compiled["builtin"]
    assert (
        "MERGE INTO silver.orders AS t USING m__batch AS s ON t.order_id = s.order_id "
        "WHEN MATCHED THEN DELETE" in compiled["override"]
    )
    assert "ROW_NUMBER" not in compiled["override"]


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        (None, "NULL"),
        (True, "TRUE"),
        (42, "42"),
        (Decimal("10.50"), "10.50BD"),
        ("it's", "'it\\'s'"),
        (datetime(2024, 1, 1, 12, 0), "TIMESTAMP '2024-01-01 12:00:00'"),
        (
            TypedLiteral("TIMESTAMP_NTZ", "2024-01-01 00:00:00"),
            "TIMESTAMP_NTZ '2024-01-01 00:00:00'",
        ),
    ],
)
def test_sql_literal(value, literal) -> None:
    assert sql_literal(value) == literal


def test_macro_docs_show_the_sql_the_macros_compile_to() -> None:
    spec = importlib.util.spec_from_file_location("macro_docs", REPO / "scripts" / "macro_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for path, text in module.pages().items():
        assert path.read_text() == text, f"{path} is stale: run scripts/macro_docs.py"
