"""DL023 (UnknownColumn) beyond its golden fixture: what the linter knows of each relation's
columns, and the SQL it must never flag (Spark resolves it), since a false positive is worse
than a miss."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runner.lint import lint_project

CONFIG = "{{ config(stream='orders', target='silver.m', unique_key='order_id') }}\n"


def _findings(root: Path, code: str = "DL023") -> list[tuple[int, int, str]]:
    return [(v.line, v.col, v.message) for v in lint_project(root).violations if v.code == code]


# Spark resolves every column of this model: lambdas, struct fields, lateral column aliases,
# correlated subqueries, CTEs, select aliases in ORDER BY / HAVING, UNIONs, LATERAL VIEW,
# a join with a table the project does not declare, functions without parentheses.
SPARK_RESOLVES = """\
{{ config(stream='orders', target='silver.m', unique_key='order_id',
          columns='order_id STRING, n BIGINT, info STRUCT<a: INT, b: STRING>') }}

CREATE OR REPLACE TEMPORARY VIEW v1 AS
WITH c AS (SELECT order_id AS oid, amount * 2 AS dbl, struct(status, op) AS st FROM {{ batch }})
SELECT oid, dbl, st.status AS s1, c.st.op AS s2, transform(array(1, 2), x -> x + dbl) AS arr,
  upper(st.status) AS up, current_date AS d, dbl + 1 AS dbl1, dbl1 * 2 AS lat
FROM c
WHERE oid IN (SELECT order_id FROM {{ batch }} b WHERE b.amount > c.dbl)
  AND EXISTS (SELECT 1 FROM {{ batch }} x WHERE x.order_id = oid)
ORDER BY up, 1;

CREATE OR REPLACE TEMPORARY VIEW v2 AS
SELECT order_id, count(*) AS n FROM {{ batch }} GROUP BY order_id HAVING n > 1
UNION ALL
SELECT order_id, 0 AS n FROM {{ batch }}
ORDER BY n;

CREATE OR REPLACE TEMPORARY VIEW v3 AS
SELECT e.order_id, t FROM {{ batch }} e LATERAL VIEW explode(array('a')) ex AS t;

CREATE OR REPLACE TEMPORARY VIEW v4 AS
SELECT a.order_id, b.segment, ROW_NUMBER() OVER (PARTITION BY a.order_id ORDER BY b.since) AS rn
FROM {{ batch }} a JOIN crm.customers b ON a.customer_id = b.id
JOIN v2 USING (order_id);

CREATE OR REPLACE TEMPORARY VIEW v5 AS
SELECT v2.order_id, v2.n, q.status FROM v2 JOIN (SELECT order_id AS o2, status FROM {{ batch }}) q
  ON v2.order_id = q.o2
WHERE q.status = 'x' QUALIFY ROW_NUMBER() OVER (PARTITION BY o2 ORDER BY n) = 1;

CREATE OR REPLACE TEMPORARY VIEW v6 AS
SELECT order_id, max(amount) FROM {{ batch }} GROUP BY order_id;

CREATE OR REPLACE TEMPORARY VIEW v7 AS SELECT `max(amount)` AS top FROM v6;

CREATE OR REPLACE TEMPORARY VIEW v8 AS
SELECT order_id, d.value FROM {{ batch }}, table_changes('silver.x', 0) d;

MERGE INTO {{ this }} AS t
USING (SELECT order_id, n, named_struct('a', 1, 'b', 'c') AS info FROM v5) AS s
ON t.order_id = s.order_id
WHEN MATCHED AND t.info.a > 0 THEN UPDATE SET t.n = s.n + t.n, info = s.info
WHEN NOT MATCHED THEN INSERT (order_id, n, info) VALUES (s.order_id, s.n, s.info);
"""


def test_sql_spark_resolves_is_never_flagged(project_factory: Callable[..., Path]) -> None:
    assert _findings(project_factory({"m": SPARK_RESOLVES})) == []


def test_a_typo_is_reported_at_its_place_with_the_closest_names(
    project_factory: Callable[..., Path],
) -> None:
    sql = CONFIG + "SELECT order_id, custmer_id FROM {{ batch }};\n"
    [(line, col, message)] = _findings(project_factory({"m": sql}))
    assert (line, col) == (2, 18)
    assert message.startswith("[UNRESOLVED_COLUMN] column 'custmer_id' is not a column of m__batch")
    assert message.endswith("did you mean customer_id?")


def test_the_batch_view_has_the_rescued_data_column(project_factory: Callable[..., Path]) -> None:
    ok = CONFIG + "SELECT order_id, _rescued_data FROM {{ batch }};\n"
    assert _findings(project_factory({"m": ok})) == []


def test_a_change_data_feed_stream_has_the_feed_columns(
    project_factory: Callable[..., Path],
) -> None:
    upstream = (
        "{{ config(stream='orders', target='silver.up', unique_key='order_id', "
        "table_properties={'delta.enableChangeDataFeed': 'true'}) }}\n"
        "SELECT order_id FROM {{ batch }};\n"
    )
    reader = (
        "{{ config(stream='up_changes', target='gold.down') }}\n"
        "SELECT order_id, _change_type, _commit_version, _commit_timestamp FROM {{ batch }}\n"
        "WHERE _change_typ <> 'update_preimage';\n"
    )
    streams = (
        "streams:\n  orders:\n    format: json\n    path: landing/orders\n"
        '    schema: "order_id STRING, amount DOUBLE"\n'
        "  up_changes:\n    format: delta\n    ref: up\n    change_data_feed: true\n"
    )
    root = project_factory({"up": upstream, "down": reader}, streams=streams)
    [(line, _, message)] = _findings(root)
    assert line == 3 and "did you mean _change_type?" in message


def test_a_view_spark_could_not_create_is_not_judged_again(
    project_factory: Callable[..., Path],
) -> None:
    """One cause, one finding: what reads a view whose query failed is not reported."""
    sql = (
        CONFIG + "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT order_idd FROM {{ batch }};\n"
        "SELECT order_id, whatever FROM v;\n"
    )
    assert [line for line, _, _ in _findings(project_factory({"m": sql}))] == [2]


def test_columns_of_undeclared_relations_are_not_second_guessed(
    project_factory: Callable[..., Path],
) -> None:
    sql = CONFIG + "SELECT anything, c.whatever FROM crm.customers c;\n"
    streams = "streams:\n  orders:\n    format: delta\n    path: landing/orders\n"  # no schema
    no_schema = CONFIG + "SELECT anything FROM {{ batch }};\n"
    assert _findings(project_factory({"m": sql})) == []
    assert _findings(project_factory({"m": no_schema}, streams=streams)) == []


def test_a_target_that_gains_columns_is_not_judged(project_factory: Callable[..., Path]) -> None:
    evolving = (
        "{{ config(stream='orders', target='silver.m', unique_key='order_id', "
        "columns='order_id STRING', schema_drift='evolve') }}\n"
        "SELECT order_id, brand_new FROM {{ batch }};\n"
    )
    assert _findings(project_factory({"m": evolving})) == []


def test_seeds_and_other_models_targets_are_known(project_factory: Callable[..., Path]) -> None:
    upstream = (
        "{{ config(stream='orders', target='silver.up', unique_key='order_id', "
        "columns='order_id STRING, customer_id STRING') }}\n"
        "SELECT order_id, customer_id FROM {{ batch }};\n"
    )
    reader = (
        "{{ config(stream='orders', target='gold.down', unique_key='order_id') }}\n"
        "SELECT b.order_id, c.tier, c.nme FROM {{ batch }} b\n"
        "JOIN {{ ref('up') }} u ON u.order_id = b.order_id JOIN ref.customers c\n"
        "  ON c.customer_id = u.custid;\n"
    )
    root = project_factory({"up": upstream, "down": reader})
    (root / "seeds").mkdir()
    (root / "seeds" / "customers.csv").write_text("customer_id,tier\nc1,gold\n")
    (root / "seeds" / "seeds.yml").write_text(
        "seeds:\n  customers:\n    target: ref.customers\n"
        '    columns: "customer_id STRING, tier STRING"\n'
    )
    found = [(line, col, message.split(" (")[0]) for line, col, message in _findings(root)]
    assert found == [
        (2, 28, "[UNRESOLVED_COLUMN] column 'c.nme' is not a column of c"),
        (4, 22, "[UNRESOLVED_COLUMN] column 'u.custid' is not a column of u"),
    ]


def test_delta_auto_merge_leaves_the_targets_unknown(project_factory: Callable[..., Path]) -> None:
    upstream = (
        "{{ config(stream='orders', target='silver.up', unique_key='order_id', "
        "columns='order_id STRING') }}\n"
        "INSERT INTO {{ this }} SELECT order_id FROM {{ batch }};\n"
    )
    reader = CONFIG + "SELECT u.added_by_evolution FROM {{ ref('up') }} u;\n"
    root = project_factory({"up": upstream, "m": reader})
    assert [line for line, _, _ in _findings(root)] == [2]
    yml = root / "project.yml"
    yml.write_text(
        yml.read_text().replace(
            "    spark_conf:\n",
            "    spark_conf:\n      spark.databricks.delta.schema.autoMerge.enabled: 'true'\n",
        )
    )
    assert _findings(root) == []


def test_update_and_delete_of_a_known_table(project_factory: Callable[..., Path]) -> None:
    sql = (
        "{{ config(stream='orders', target='silver.m', unique_key='order_id', "
        "columns='order_id STRING, n BIGINT, info STRUCT<a: INT>') }}\n"
        "UPDATE {{ this }} SET n = 0\n"
        "WHERE order_id IN (SELECT order_id FROM {{ batch }} b WHERE b.amount > n)\n"
        "  AND info.a > 1;\n"
        "DELETE FROM {{ this }} t\n"
        "WHERE EXISTS (SELECT 1 FROM {{ batch }} b WHERE b.order_id = t.order_id AND n > 0);\n"
        "UPDATE {{ this }} SET nn = 0 WHERE ordr_id = 'x';\n"
        "DELETE FROM {{ this }} WHERE stat = 'x';\n"
    )
    found = [(line, col) for line, col, _ in _findings(project_factory({"m": sql}))]
    assert found == [(7, 23), (7, 36), (8, 30)]
