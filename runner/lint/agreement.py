"""What the linter accepts as one valid statement: the yardstick of the differential test
against Spark's parser (tests/spark/test_lint_agreement.py)."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import ParseError

from runner.sql.dialect import parse_statement


def lint_accepts(sql: str) -> bool:
    """True when the Delta dialect parses ``sql`` as exactly one statement it understands:
    no DL001 syntax error, and not an opaque command (whose text nothing checks)."""
    try:
        statement = parse_statement(sql, allow_command=True)
    except ParseError:
        return False
    return not isinstance(statement, exp.Command)
