"""Function calls read from a statement's text (runner/lint/calls.py), for DL038."""

from __future__ import annotations

import pytest

from runner.lint.calls import blanked, calls


def counted(sql: str) -> list[tuple[str, int]]:
    return [(c.name, c.arguments) for c in calls(sql)]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT max(a, b) FROM t", [("max", 2)]),
        ("SELECT current_timestamp() AS now", [("current_timestamp", 0)]),
        ("SELECT coalesce(a, nvl(b, c), 1)", [("coalesce", 3), ("nvl", 2)]),
        ("SELECT aggregate(xs, 0, (acc, x) -> acc + x)", [("aggregate", 3)]),
        ("SELECT count(DISTINCT a, b), count(*)", [("count", 2), ("count", 1)]),
        ("SELECT concat('a,b', \"c)d\", `e,f`)", [("concat", 3)]),
        ("SELECT substr(s, 1) -- substr(s, 1, 2, 3)\n", [("substr", 2)]),
        ("SELECT /* max(a, b, c) */ lower(s)", [("lower", 1)]),
        ("SELECT element_at(arr[0], 1)", [("element_at", 2)]),
        ("SELECT count(*) FILTER (WHERE x > 1) FROM t", [("count", 1)]),
        ("SELECT a FROM t WHERE a IN (1, 2) AND (b OR c)", []),
        (
            "SELECT * FROM range(1, 10) JOIN table_changes('t', 0)",
            [("range", 2), ("table_changes", 2)],
        ),
    ],
)
def test_calls_and_their_argument_counts(sql: str, expected: list[tuple[str, int]]) -> None:
    assert counted(sql) == expected


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT CAST(a AS DECIMAL(10, 2))",
        "SELECT EXTRACT(YEAR FROM d)",
        "SELECT TRIM(BOTH ' ' FROM s)",
        "SELECT POSITION('a' IN s)",
        "SELECT timestampadd(HOUR, 1, ts)",
        "SELECT datediff(DAY, a, b)",
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u)",
        "SELECT fn(a => 1, b => 2)",
        "CREATE TABLE s.t (amount DECIMAL(10, 2), name VARCHAR(20))",
        "INSERT INTO s.t (a, b) VALUES (1, 2)",
        "SELECT * FROM t WHERE name LIKE ANY ('a%', 'b%')",
        "CREATE OR REPLACE TEMPORARY VIEW v (a, b) AS SELECT 1, 2",
        "SELECT db.fn(a, b, c)",
    ],
)
def test_what_is_not_an_ordinary_call_is_left_out(sql: str) -> None:
    assert counted(sql) == []


def test_blanking_keeps_offsets_and_line_breaks() -> None:
    sql = "SELECT 'it''s', \"x\" -- note\n/* a\nb */ max(a)"
    text = blanked(sql)
    assert len(text) == len(sql) and text.count("\n") == sql.count("\n")
    assert text.index("max(a)") == sql.index("max(a)")
    assert "it" not in text and "note" not in text
    assert [c.offset for c in calls(sql)] == [sql.index("max")]
