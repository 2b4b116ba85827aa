"""Function calls in a statement's SQL text, with the number of arguments each is given.

Read from the text, not the parse tree: sqlglot turns a call into its own expression classes,
whose arguments need not be the ones written (it accepts ``max(a, b)`` for dialects where that
is valid), while Spark counts what was written. Strings, quoted names and comments are blanked
first; what is not an ordinary call is left out rather than guessed at:

- special syntax inside the parentheses (``CAST(x AS t)``, ``EXTRACT(YEAR FROM d)``,
  ``TRIM(BOTH ' ' FROM s)``, ``POSITION(a IN b)``), a subquery (``EXISTS (SELECT ...)``), a
  date-time unit first (``timestampadd(HOUR, 1, ts)``), named arguments (``fn(a => 1)``);
- a type name with its parameters (``DECIMAL(10, 2)`` in a column definition);
- a name after a word that makes it a table, a view or a column list (``INSERT INTO t (a)``),
  and ``ANY``/``SOME``/``ALL`` after ``LIKE`` (``LIKE ANY ('a%', 'b%')``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Call:
    """``name(...)`` at ``offset`` of the SQL, given ``arguments`` arguments."""

    name: str  # lower-case
    offset: int
    arguments: int


_CALL = re.compile(r"(?<![\w.$`])([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PREVIOUS_WORD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*$")
_TYPE_NAMES = frozenset(
    {"array", "bigint", "binary", "boolean", "byte", "char", "character", "date", "dec",
     "decimal", "double", "float", "int", "integer", "interval", "long", "map", "numeric",
     "real", "short", "smallint", "string", "struct", "timestamp", "timestamp_ltz",
     "timestamp_ntz", "tinyint", "varchar", "variant", "void"}
)  # fmt: skip
# Words followed by "(" that are syntax, not functions
_KEYWORDS = frozenset(
    {"and", "by", "cube", "else", "in", "on", "or", "over", "rollup", "sets", "set", "then",
     "values", "when", "within"}
)  # fmt: skip
# After these, a name followed by "(" is a table, a view, a column list or a quantifier (after
# FROM or JOIN it is a table function's call, counted as any other: `range(10)`)
_NOT_A_CALL_AFTER = frozenset(
    {"as", "exists", "function", "ilike", "into", "like", "table", "update", "using", "view",
     "with"}
)  # fmt: skip
_SPECIAL_SYNTAX = frozenset(
    {"as", "both", "for", "from", "in", "leading", "placing", "similar", "trailing", "using"}
)
_QUERY_START = frozenset({"select", "with", "from", "values", "where", "partition", "order"})
_UNITS = frozenset(
    {"year", "years", "quarter", "quarters", "month", "months", "week", "weeks", "day", "days",
     "dayofyear", "hour", "hours", "minute", "minutes", "second", "seconds", "millisecond",
     "milliseconds", "microsecond", "microseconds", "nanosecond", "nanoseconds", "yyyy", "yy",
     "mm", "dd", "hh", "mi", "ss"}
)  # fmt: skip
_SET_QUANTIFIERS = frozenset({"distinct", "all"})


def calls(sql: str) -> Iterator[Call]:
    """The ordinary function calls of ``sql`` (outer calls before the calls in their
    arguments), each with the number of arguments written."""
    text = blanked(sql)
    for match in _CALL.finditer(text):
        name = match.group(1).lower()
        if name in _TYPE_NAMES or name in _KEYWORDS:
            continue
        before = _PREVIOUS_WORD.search(text[max(0, match.start() - 64) : match.start()])
        if before and before.group(1).lower() in _NOT_A_CALL_AFTER:
            continue
        arguments = _argument_count(text, match.end() - 1)
        if arguments is not None:
            yield Call(name, match.start(), arguments)


def _argument_count(text: str, opening: int) -> int | None:
    """How many arguments the parentheses opening at ``opening`` hold, or None when they hold
    something else than a plain argument list (or never close)."""
    depth, commas, start = 0, 0, opening + 1
    top: list[str] = []  # the text at depth 1, to look for keywords
    for at in range(opening, len(text)):
        char = text[at]
        if char in "([":
            depth += 1
            if depth == 2:
                top.append(" ")
        elif char in ")]":
            depth -= 1
            if depth == 0:
                return _counted("".join(top), text[start:at], commas)
        elif depth == 1:
            top.append(char)
            if char == ",":
                commas += 1
    return None


def _counted(top: str, inner: str, commas: int) -> int | None:
    if "=>" in top:
        return None
    words = [w.lower() for w in _WORD.findall(top)]
    if any(w in _SPECIAL_SYNTAX for w in words):
        return None
    if words and (words[0] in _QUERY_START or words[0] in _UNITS):
        return None
    if not inner.strip():
        return 0
    first = top.strip().split(None, 1)
    if first and first[0].lower() in _SET_QUANTIFIERS and len(first) == 1:
        return None  # `count(DISTINCT)`: not a call Spark parses
    return commas + 1


def blanked(sql: str) -> str:
    """``sql`` with the inside of strings, back-quoted names and comments replaced by spaces
    (line breaks kept), so that offsets still point at the same characters."""
    pieces, at, length = [], 0, len(sql)
    while (found := _QUOTED_OR_COMMENT.search(sql, at)) is not None:
        start, token = found.start(), found.group()
        if token == "--":
            end = sql.find("\n", start)
            end, keep = (length if end < 0 else end), start
        elif token == "/*":
            end = sql.find("*/", start + 2)
            end, keep = (length if end < 0 else end + 2), start
        else:  # a quote: its inside is blanked, the quotes kept
            end, keep = _closing(sql, start, token), start + 1
        pieces += [sql[at:keep], _NOT_A_LINE_BREAK.sub(" ", sql[keep:end])]
        at = end
        if token in "'\"`" and at < length:
            pieces.append(sql[at])  # the closing quote
            at += 1
    pieces.append(sql[at:])
    return "".join(pieces)


_QUOTED_OR_COMMENT = re.compile(r"['\"`]|--|/\*")
_NOT_A_LINE_BREAK = re.compile(r"[^\n]")


def _closing(sql: str, opening: int, quote: str) -> int:
    """Where the quote opening at ``opening`` closes (the text's end if it never does); a
    backslash escapes a quote inside a string, not inside a back-quoted name."""
    at = opening + 1
    while True:
        end = sql.find(quote, at)
        if end < 0:
            return len(sql)
        backslashes = len(sql[at:end]) - len(sql[at:end].rstrip("\\"))
        if quote == "`" or backslashes % 2 == 0:
            return end
        at = end + 1
