"""What a rule sees of one model: its spec, its rendered and parsed statements, its Jinja facts,
and how to turn a position in a rendered statement into ``line:col`` of the model's source.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from runner.errors import RunnerError
from runner.lint.jinja_scan import TemplateScan
from runner.model_sql import CompiledStatement
from runner.project import Project
from runner.specs.model import ModelSpec

_JINJA_OPENERS = ("{{", "{%", "{#")
E = TypeVar("E", bound=exp.Expr)


@dataclass(frozen=True)
class ParsedStatement:
    """A rendered statement and what the Delta dialect made of it."""

    statement: CompiledStatement
    batch_id: int | None  # None for set-up statements
    expression: exp.Expression | None
    error: ParseError | TokenError | None = None
    # every node of ``expression``, breadth first (the order of find_all): walked once, when
    # the statement is parsed, for all the rules (see ``ModelContext.expressions``)
    nodes: tuple[exp.Expr, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.expression is not None and not self.nodes:
            object.__setattr__(self, "nodes", tuple(self.expression.walk()))

    @property
    def sql(self) -> str:
        return self.statement.sql


@dataclass(frozen=True)
class Location:
    line: int
    col: int


@dataclass
class ModelContext:
    """One model file, ready for the rules."""

    project: Project
    file: Path
    path: str  # project-relative, POSIX
    source: str
    scan: TemplateScan
    model: ModelSpec | None = None
    load_error: RunnerError | None = None
    render_errors: list[RunnerError] = field(default_factory=list)
    setup: list[ParsedStatement] = field(default_factory=list)
    batches: dict[int, list[ParsedStatement]] = field(default_factory=dict)

    @property
    def source_lines(self) -> list[str]:
        return self.source.split("\n")

    def statements(self) -> Iterator[ParsedStatement]:
        """Set-up statements, then each representative batch's statements in order."""
        yield from self.setup
        for batch_id in sorted(self.batches):
            yield from self.batches[batch_id]

    def expressions(self, kind: type[E]) -> Iterator[tuple[ParsedStatement, E]]:
        """Every node of type ``kind`` in every parsed statement, with its statement."""
        for parsed in self.statements():
            for node in parsed.nodes:
                if isinstance(node, kind):
                    yield parsed, node

    # -- locations ----------------------------------------------------------------------------

    def locate_node(self, parsed: ParsedStatement, node: exp.Expr | None) -> Location:
        """The source position of ``node`` (the earliest token under it that has a position)."""
        starts = [
            n.meta["start"]
            for n in (node.walk() if node is not None else ())
            if isinstance(n, exp.Expression) and "start" in n.meta
        ]
        if not starts:
            return self.locate_line(parsed.statement.line)
        start = min(starts)
        return self.locate_offset(parsed, start, _token_text(parsed.sql, start))

    def locate_offset(self, parsed: ParsedStatement, offset: int, token: str = "") -> Location:
        """The source position of character ``offset`` of the statement's SQL."""
        sql = parsed.sql
        line = sql.count("\n", 0, offset) + 1
        col = offset - (sql.rfind("\n", 0, offset) + 1) + 1
        return self.locate_statement_position(parsed, line, col, token)

    def locate_statement_position(
        self, parsed: ParsedStatement, line: int, col: int, token: str = ""
    ) -> Location:
        """Map ``line:col`` of a rendered statement to the model source.

        The line comes from the statement's line map. The column is exact when the source line
        holds the statement line verbatim (no Jinja on it); otherwise it is where ``token``
        appears in the source line, or the line's first non-blank column.
        """
        statement = parsed.statement
        if not statement.line_map:  # runner-generated (set-up, maintenance): at config()
            return self.locate_line(statement.line)
        source_line = statement.source_line_at(line)
        source_text = self._source_line(source_line)
        sql_lines = parsed.sql.split("\n")
        sql_text = sql_lines[line - 1] if 0 < line <= len(sql_lines) else ""
        sql_lead = len(sql_text) - len(sql_text.lstrip())
        if not any(opener in source_text for opener in _JINJA_OPENERS) and sql_text.strip():
            at = source_text.find(sql_text.strip())
            if at >= 0:
                return Location(source_line, max(at + col - sql_lead, 1))
        # Text before the first Jinja expression is verbatim, and the expression's output starts
        # where the expression does: exact up to and including that point.
        source_lead = len(source_text) - len(source_text.lstrip())
        same = _common_prefix(sql_text[sql_lead:], source_text[source_lead:])
        if sql_text.strip() and 0 < col - sql_lead <= same + 1:
            return Location(source_line, source_lead + col - sql_lead)
        return self.locate_line(source_line, token)

    def locate_line(self, line: int, token: str = "") -> Location:
        """``line`` of the source, at ``token`` when it appears there once, else its first
        non-blank column."""
        text = self._source_line(line)
        if token and text.count(token) == 1:
            return Location(line, text.index(token) + 1)
        return Location(line, len(text) - len(text.lstrip()) + 1)

    def _source_line(self, line: int) -> str:
        lines = self.source_lines
        return lines[line - 1] if 0 < line <= len(lines) else ""


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _token_text(sql: str, start: int) -> str:
    """The word that starts at ``start`` (used to find it again on a source line)."""
    end = start
    while end < len(sql) and (sql[end].isalnum() or sql[end] in "_*."):
        end += 1
    return sql[start:end] if end > start else sql[start : start + 1]
