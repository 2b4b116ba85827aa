"""Split rendered SQL into statements at semicolons that are not in quotes or comments."""

from __future__ import annotations

from dataclasses import dataclass

from runner.errors import TemplateError


@dataclass(frozen=True)
class SqlStatement:
    """One statement of rendered SQL, with the rendered line its first token is on."""

    sql: str
    line: int  # 1-based line in the rendered text where the statement's code starts

    @property
    def keyword(self) -> str:
        """The statement's first keyword, upper-cased (``MERGE``, ``CREATE``, ...)."""
        word = strip_comments(self.sql).split(None, 1)
        return word[0].upper().rstrip("(") if word else ""


def split_statements(sql: str) -> list[SqlStatement]:
    """Split ``sql`` on top-level ``;``.

    Quotes (``'``, ``"``, backtick, with backslash escapes in the first two as in Spark SQL),
    ``--`` line comments and ``/* */`` block comments are respected. Statements holding only
    whitespace or comments are dropped. An unterminated quote or comment raises TemplateError.
    """
    statements: list[SqlStatement] = []
    start = 0
    i = 0
    n = len(sql)
    while i < n:
        ch = sql[i]
        if ch in ("'", '"', "`"):
            i = _skip_quoted(sql, i)
        elif sql.startswith("--", i):
            newline = sql.find("\n", i)
            i = n if newline < 0 else newline
        elif sql.startswith("/*", i):
            close = sql.find("*/", i + 2)
            if close < 0:
                raise TemplateError("unterminated /* comment", line=sql.count("\n", 0, i) + 1)
            i = close + 2
        elif ch == ";":
            _append(statements, sql, start, i)
            start = i + 1
            i += 1
        else:
            i += 1
    _append(statements, sql, start, n)
    return statements


def strip_comments(sql: str) -> str:
    """``sql`` without its comments (quotes respected); used to classify statements."""
    out: list[str] = []
    i = 0
    n = len(sql)
    while i < n:
        if sql[i] in ("'", '"', "`"):
            end = _skip_quoted(sql, i)
            out.append(sql[i:end])
            i = end
        elif sql.startswith("--", i):
            newline = sql.find("\n", i)
            i = n if newline < 0 else newline
        elif sql.startswith("/*", i):
            close = sql.find("*/", i + 2)
            i = n if close < 0 else close + 2
            out.append(" ")
        else:
            out.append(sql[i])
            i += 1
    return "".join(out)


def _skip_quoted(sql: str, i: int) -> int:
    """Index just past the quoted string or identifier that starts at ``i``."""
    quote = sql[i]
    j = i + 1
    while j < len(sql):
        if sql[j] == "\\" and quote != "`":
            j += 2
            continue
        if sql[j] == quote:
            if quote == "`" and sql.startswith("``", j):  # doubled backtick escapes itself
                j += 2
                continue
            return j + 1
        j += 1
    raise TemplateError(f"unterminated {quote} quote starting here", line=sql.count("\n", 0, i) + 1)


def _append(statements: list[SqlStatement], sql: str, start: int, end: int) -> None:
    chunk = sql[start:end]
    if not strip_comments(chunk).strip():
        return
    body = chunk.strip()
    # the line of the first character of code, not of leading blank lines or comments
    leading = len(chunk) - len(chunk.lstrip())
    line = sql.count("\n", 0, start + leading) + 1
    statements.append(SqlStatement(sql=body, line=line))
