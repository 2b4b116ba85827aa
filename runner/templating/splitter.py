"""Split rendered SQL into statements at semicolons that are not in quotes or comments."""

from __future__ import annotations

import re
from dataclasses import dataclass

from runner.errors import TemplateError

# what the scans stop at: a quote, a comment's start or a statement's end (all else is skipped
# by the regex engine, not by a Python loop over characters)
_SPECIAL = re.compile(r"['\"`;]|--|/\*")
# inside a quote: the closing quote, or an escape to step over (``\x`` in strings, a doubled
# backtick in identifiers)
_QUOTED_END = {
    "'": re.compile(r"\\.|'", re.DOTALL),
    '"': re.compile(r'\\.|"', re.DOTALL),
    "`": re.compile(r"``|`"),
}


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
    while found := _SPECIAL.search(sql, i):
        token, at = found.group(), found.start()
        if token == ";":
            _append(statements, sql, start, at)
            start = i = at + 1
        elif token == "--":
            i = sql.find("\n", at)
            if i < 0:
                break
        elif token == "/*":
            close = sql.find("*/", at + 2)
            if close < 0:
                raise TemplateError("unterminated /* comment", line=sql.count("\n", 0, at) + 1)
            i = close + 2
        else:
            i = _skip_quoted(sql, at)
    _append(statements, sql, start, len(sql))
    return statements


def strip_comments(sql: str) -> str:
    """``sql`` without its comments (quotes respected), line for line (a block comment leaves
    its line breaks); used to classify statements and to search their code."""
    out: list[str] = []
    i = 0
    while found := _SPECIAL.search(sql, i):
        token, at = found.group(), found.start()
        if token == "--":
            out.append(sql[i:at])
            i = sql.find("\n", at)
            if i < 0:
                return "".join(out)
        elif token == "/*":
            out.append(sql[i:at])
            close = sql.find("*/", at + 2)
            out.append(" " + "\n" * sql.count("\n", at, close if close >= 0 else len(sql)))
            if close < 0:
                return "".join(out)
            i = close + 2
        elif token == ";":
            out.append(sql[i : at + 1])
            i = at + 1
        else:
            end = _skip_quoted(sql, at)
            out.append(sql[i:end])
            i = end
    out.append(sql[i:])
    return "".join(out)


def _skip_quoted(sql: str, i: int) -> int:
    """Index just past the quoted string or identifier that starts at ``i``."""
    quote = sql[i]
    for found in _QUOTED_END[quote].finditer(sql, i + 1):
        if found.group() == quote:
            return found.end()
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
