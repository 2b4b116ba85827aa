"""DL035 (DataTypeMismatch) and DL036 (StoreAssignmentRefused) beyond their golden fixtures:
the casts Spark's ANSI mode refuses between kinds, a map where Spark orders values, and the
columns of a Change Data Feed read with table_changes(). What Spark accepts is never flagged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runner.lint import lint_project

CONFIG = """\
{{ config(stream='orders', target='silver.m', unique_key='order_id',
          columns='order_id STRING, status STRING, updated_at TIMESTAMP, d DATE, flag BOOLEAN,
                   n BIGINT, raw BINARY, tags MAP<STRING, STRING>') }}
"""


def _findings(root: Path, *codes: str) -> list[tuple[int, str, str]]:
    return [(v.line, v.code, v.message) for v in lint_project(root).violations if v.code in codes]


def test_an_update_stores_only_what_ansi_casts_into_the_column(
    project_factory: Callable[..., Path],
) -> None:
    # each pair was checked against Spark 4.2 with Delta 4.4 (UPDATE SET, EXPLAIN)
    model = (
        CONFIG
        + """
UPDATE {{ this }} SET updated_at = true WHERE order_id IS NULL;
UPDATE {{ this }} SET updated_at = 'x' WHERE order_id IS NULL;
UPDATE {{ this }} SET d = n WHERE order_id IS NULL;
UPDATE {{ this }} SET flag = d WHERE order_id IS NULL;
UPDATE {{ this }} SET raw = n WHERE order_id IS NULL;
UPDATE {{ this }} SET n = raw WHERE order_id IS NULL;
UPDATE {{ this }} SET d = '12' WHERE order_id IS NULL;
UPDATE {{ this }} SET updated_at = 'now', d = '2024-01-01', status = true, n = updated_at,
  flag = n, updated_at = n, raw = status, d = updated_at WHERE order_id IS NULL;
"""
    )
    found = _findings(project_factory({"m": model}), "DL036")

    assert [(line, message.split("]")[0] + "]") for line, _, message in found] == [
        (5, "[DATATYPE_MISMATCH.CAST_WITH_CONF_SUGGESTION]"),
        (6, "[CAST_INVALID_INPUT]"),
        (7, "[DATATYPE_MISMATCH.CAST_WITH_FUNC_SUGGESTION]"),
        (8, "[DATATYPE_MISMATCH.CAST_WITH_CONF_SUGGESTION]"),
        (9, "[DATATYPE_MISMATCH.CAST_WITH_CONF_SUGGESTION]"),
        (10, "[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION]"),
        (11, "[CAST_INVALID_INPUT]"),
    ]
    assert "cannot cast BOOLEAN to TIMESTAMP with ANSI mode on" in found[0][2]


def test_a_map_where_spark_orders_values(project_factory: Callable[..., Path]) -> None:
    model = (
        CONFIG
        + """
SELECT max(tags), min_by(order_id, tags) FROM {{ this }};
SELECT greatest(tags, tags) AS g FROM {{ this }} ORDER BY tags;
SELECT CAST(tags AS STRING) AS tags FROM {{ this }} ORDER BY tags;
SELECT max(status), max_by(tags, status) FROM {{ this }};
"""
    )
    found = _findings(project_factory({"m": model}), "DL035")

    assert [(line, message.split(":")[1].strip()) for line, _, message in found] == [
        (5, "max() orders its values, and a MAP has no order"),
        (5, "min_by() orders its values, and a MAP has no order"),
        (6, "ORDER BY orders its values, and a MAP has no order"),
        (6, "greatest() orders its values, and a MAP has no order"),
    ]  # line 7 orders by the projected string, line 8 orders strings


def test_try_cast_gives_null_for_a_bad_string_but_not_for_a_bad_type(
    project_factory: Callable[..., Path],
) -> None:
    model = (
        CONFIG
        + """
SELECT TRY_CAST('x' AS INT), TRY_CAST(flag AS DATE), CAST('12' AS TIMESTAMP),
  CAST('T10:00' AS TIMESTAMP), CAST('today' AS DATE) FROM {{ this }};
"""
    )
    found = _findings(project_factory({"m": model}), "DL035")

    assert [message.split("]")[0] + "]" for _, _, message in found] == [
        "[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION]",  # TRY_CAST(flag AS DATE)
        "[CAST_INVALID_INPUT]",  # CAST('12' AS TIMESTAMP)
    ]


def test_table_changes_has_the_tables_columns_and_the_feeds(
    project_factory: Callable[..., Path],
) -> None:
    upstream = (
        "{{ config(stream='orders', target='silver.up', unique_key='order_id', "
        "table_properties={'delta.enableChangeDataFeed': 'true'}) }}\n"
        "MERGE INTO {{ this }} AS t USING {{ batch }} AS s ON t.order_id = s.order_id\n"
        "WHEN NOT MATCHED THEN INSERT *;\n"
    )
    reader = """\
{{ config(stream='orders', target='silver.changes', unique_key='order_id') }}
CREATE OR REPLACE TEMPORARY VIEW feed AS
SELECT order_id, _change_type, c._commit_version FROM table_changes('{{ ref("up") }}', 0) AS c;
CREATE OR REPLACE TEMPORARY VIEW typo AS
SELECT order_i FROM table_changes('{{ ref("up") }}', 0);
"""
    found = _findings(project_factory({"up": upstream, "reader": reader}), "DL023")

    assert [(line, message.split(" (")[0]) for line, _, message in found] == [
        (5, "[UNRESOLVED_COLUMN] column 'order_i' is not a column of up or silver.up")
    ]
    assert "_commit_timestamp" in found[0][2] and "did you mean order_id?" in found[0][2]


def test_a_table_function_with_the_wrong_number_of_arguments(
    project_factory: Callable[..., Path],
) -> None:
    model = """\
{{ config(stream='orders', target='silver.changes', unique_key='order_id') }}
CREATE OR REPLACE TEMPORARY VIEW a AS SELECT * FROM table_changes('silver.up');
CREATE OR REPLACE TEMPORARY VIEW b AS SELECT * FROM range(1, 2, 3, 4, 5);
CREATE OR REPLACE TEMPORARY VIEW c AS SELECT * FROM range(10);
"""
    found = _findings(project_factory({"m": model}), "DL038")

    assert [(line, message) for line, _, message in found] == [
        (2, "[INCORRECT_NUMBER_OF_ARGUMENTS] table_changes() takes 2 or 3 arguments, not 1"),
        (3, "[WRONG_NUM_ARGS] range() takes 1, 2, 3 or 4 arguments, not 5"),
    ]


def test_complex_values_where_spark_needs_a_scalar(project_factory: Callable[..., Path]) -> None:
    # a declared map column, and what the constructors hold: Spark 4.2 refuses lines 5 to 10
    # (UNEXPECTED_INPUT_TYPE, INVALID_ORDERING_TYPE, BINARY_OP_DIFF_TYPES) and accepts 11 to 13
    model = (
        CONFIG
        + """
SELECT upper(tags), round(array(n), 1), last_day(named_struct('d', d)) FROM {{ this }};
SELECT tags = map('k', 'v') FROM {{ this }};
SELECT array(array(n)) = array(n) FROM {{ this }};
SELECT named_struct('t', tags).t > 'x' FROM {{ this }};
SELECT try_add(tags, 1) FROM {{ this }};
INSERT INTO {{ this }} (order_id, n) SELECT order_id, array(n) FROM {{ this }};
SELECT upper(CAST(tags AS STRING)), size(tags), map_keys(tags), element_at(tags, 'k') = 'v'
  FROM {{ this }};
SELECT array(array(n)) = array(array(1)), named_struct('v', n).v + 1 FROM {{ this }};
"""
    )
    found = _findings(project_factory({"m": model}), "DL035", "DL036")

    assert [(line, message.split("]")[0] + "]") for line, _, message in found] == [
        (5, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE]"),
        (5, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE]"),
        (5, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE]"),
        (6, "[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE]"),
        (7, "[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES]"),
        (8, "[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES]"),
        (9, "[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES]"),
        (10, "[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION]"),
    ]
