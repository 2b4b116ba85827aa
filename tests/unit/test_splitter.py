import pytest

from runner.errors import TemplateError
from runner.templating.splitter import split_statements, strip_comments


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT 1; SELECT 2;", ["SELECT 1", "SELECT 2"]),
        ("SELECT 1", ["SELECT 1"]),
        ("SELECT ';' AS s; SELECT 2", ["SELECT ';' AS s", "SELECT 2"]),
        ('SELECT ";" AS s; SELECT 2', ['SELECT ";" AS s', "SELECT 2"]),
        ("SELECT `a;b` FROM t; SELECT 2", ["SELECT `a;b` FROM t", "SELECT 2"]),
        ("SELECT 'it\\'s; fine'; SELECT 2", ["SELECT 'it\\'s; fine'", "SELECT 2"]),
        ("SELECT 1 -- a; comment\n; SELECT 2", ["SELECT 1 -- a; comment", "SELECT 2"]),
        ("SELECT /* a; b */ 1; SELECT 2", ["SELECT /* a; b */ 1", "SELECT 2"]),
        ("SELECT 1;;\n;  ; -- only a comment\n", ["SELECT 1"]),
        ("/* leading */ ; SELECT 1", ["SELECT 1"]),
        ("", []),
    ],
)
def test_split_respects_quotes_and_comments(sql: str, expected: list[str]) -> None:
    assert [s.sql for s in split_statements(sql)] == expected


def test_statement_line_is_where_its_code_starts() -> None:
    sql = (
        "\n\nSELECT 1;\n\n  -- note\n  MERGE INTO t\n  USING s ON true\n  WHEN MATCHED THEN DELETE;"
    )
    statements = split_statements(sql)
    assert [s.line for s in statements] == [3, 5]
    assert statements[1].keyword == "MERGE"


def test_keyword_skips_leading_comments() -> None:
    (statement,) = split_statements("-- upsert\n/* block */ merge into t using s on true")
    assert statement.keyword == "MERGE"


@pytest.mark.parametrize(
    ("sql", "line"),
    [("SELECT 1;\nSELECT 'open", 2), ("SELECT 1;\n\n/* never closed", 3), ("SELECT `x", 1)],
)
def test_unterminated_quote_or_comment_names_its_line(sql: str, line: int) -> None:
    with pytest.raises(TemplateError) as info:
        split_statements(sql)
    assert info.value.line == line


def test_strip_comments_keeps_quoted_dashes() -> None:
    assert strip_comments("SELECT '--not a comment' -- a comment") == "SELECT '--not a comment' "
