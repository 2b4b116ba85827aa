"""A Delta Lake aware SQL dialect for sqlglot.

``Delta`` extends sqlglot's Spark dialect so that the Delta Lake maintenance and
DML statements used by the runner parse into specific expression nodes instead of
the generic ``exp.Command`` fallback, which lint rules cannot inspect:

* ``OPTIMIZE tbl [FULL] [WHERE pred] [ZORDER BY (col, ...)]``     -> :class:`Optimize`
* ``VACUUM tbl [LITE | FULL] [RETAIN n HOURS] [DRY RUN]``         -> :class:`Vacuum`
* ``DESCRIBE HISTORY tbl [LIMIT n]``                              -> :class:`DescribeHistory`
* ``RESTORE [TABLE] tbl [TO] {VERSION | TIMESTAMP} AS OF x``      -> :class:`Restore`
* ``ALTER TABLE tbl UNSET TBLPROPERTIES [IF EXISTS] (key, ...)``  -> ``exp.Alter`` whose
  action is an :class:`UnsetTblProperties`
* ``MERGE WITH SCHEMA EVOLUTION INTO ...``                        -> ``exp.Merge`` with
  ``schema_evolution=True``

Importing this module registers the dialect, so ``sqlglot.parse_one(sql, read="delta")``
works afterwards.  Grammar reference: Delta's ``DeltaSqlBase.g4`` and the Databricks SQL
reference.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

__all__ = [
    "Delta",
    "DescribeHistory",
    "Optimize",
    "Restore",
    "UnsetTblProperties",
    "Vacuum",
    "parse_statement",
    "to_sql",
]


# --------------------------------------------------------------------------- expressions


class Optimize(exp.Expression):
    """``OPTIMIZE``: ``this`` is an ``exp.Table`` (or a string path literal), ``where`` an
    ``exp.Where``, ``zorder`` a list of ``exp.Column`` and ``full`` a bool flag."""

    arg_types = {"this": True, "full": False, "where": False, "zorder": False}

    @property
    def zorder_columns(self) -> list[str]:
        """Dotted names of the ZORDER BY columns, in order (empty without ZORDER BY)."""
        return [
            ".".join(part.name for part in column.parts) for column in self.args.get("zorder") or []
        ]


class Vacuum(exp.Expression):
    """``VACUUM``: ``this`` is the table or path, ``mode`` is ``"LITE"``/``"FULL"`` or None,
    ``retain`` the numeric literal of ``RETAIN n HOURS`` and ``dry_run`` a bool flag."""

    arg_types = {"this": True, "mode": False, "retain": False, "dry_run": False}

    @property
    def retain_hours(self) -> float | None:
        """The ``RETAIN n HOURS`` value as a number, or None when absent."""
        retain = self.args.get("retain")
        return float(retain.this) if retain is not None else None


class DescribeHistory(exp.Expression):
    """``DESCRIBE HISTORY``: ``this`` is the table or path, ``limit`` a numeric literal."""

    arg_types = {"this": True, "limit": False}


class Restore(exp.Expression):
    """``RESTORE TABLE``: ``this`` is the table, ``version`` an ``exp.Version`` whose ``this``
    is ``"VERSION"`` or ``"TIMESTAMP"`` and whose ``expression`` is the target literal."""

    arg_types = {"this": True, "version": True}


class UnsetTblProperties(exp.Expression):
    """``UNSET TBLPROPERTIES`` action of an ``exp.Alter``: ``expressions`` are the keys
    (string literals, ``exp.Var`` or ``exp.Dot``), ``exists`` the ``IF EXISTS`` flag."""

    arg_types = {"expressions": True, "exists": False}


# --------------------------------------------------------------------------- dialect

# Statements introduced by a plain word; sqlglot's TokenType enum is closed, so these are
# dispatched on the upper-cased token text instead of through STATEMENT_PARSERS.
_DeltaStatementParser = t.Callable[["Delta.Parser"], exp.Expr]


class Delta(Spark):
    """Spark SQL plus the Delta Lake statements listed in the module docstring."""

    class Tokenizer(Spark.Tokenizer):
        # sqlglot tokenizes OPTIMIZE/VACUUM as COMMAND, which swallows the rest of the
        # statement into one string; as plain words the parser can see every token.
        KEYWORDS = {
            key: token
            for key, token in Spark.Tokenizer.KEYWORDS.items()
            if key not in ("OPTIMIZE", "VACUUM")
        }

    class Parser(Spark.Parser):
        DELTA_STATEMENT_PARSERS: t.ClassVar[dict[str, _DeltaStatementParser]] = {
            "OPTIMIZE": lambda self: self._parse_optimize(),
            "RESTORE": lambda self: self._parse_restore(),
            "VACUUM": lambda self: self._parse_vacuum(),
        }

        ALTER_PARSERS = {
            **Spark.Parser.ALTER_PARSERS,
            "UNSET": lambda self: self._parse_alter_table_unset(),
        }

        def _parse_statement(self) -> exp.Expr | None:
            """Dispatch Delta statements that start with a plain word, else defer to Spark."""
            parser = (
                self.DELTA_STATEMENT_PARSERS.get(self._curr.text.upper())
                if self._curr.token_type == TokenType.VAR
                else None
            )
            if parser is None:
                return super()._parse_statement()

            self._advance()
            comments = self._prev_comments
            statement = parser(self)
            statement.add_comments(comments, prepend=True)
            return statement

        def _parse_delta_target(self) -> exp.Expr:
            """A table name (including ``delta.`/path```) or a quoted path string."""
            if not self._curr:
                self.raise_error("Expected a table name or path")
            return self._parse_string() or self._parse_table_parts()

        def _parse_optimize(self) -> Optimize:
            this = self._parse_delta_target()
            full = bool(self._match(TokenType.FULL))
            where = self._parse_where()
            zorder = None
            if self._match_text_seq("ZORDER", "BY"):
                zorder = self._parse_wrapped_csv(self._parse_column, optional=True)
                if not zorder:
                    self.raise_error("Expected at least one ZORDER BY column")
            return self.expression(Optimize(this=this, full=full, where=where, zorder=zorder))

        def _parse_vacuum(self) -> Vacuum:
            this = self._parse_delta_target()
            mode = self._prev.text.upper() if self._match_texts(("LITE", "FULL")) else None
            retain = None
            if self._match_text_seq("RETAIN"):
                retain = self._parse_number()
                if retain is None or not self._match_text_seq("HOURS"):
                    self.raise_error("Expected RETAIN <number> HOURS")
            dry_run = self._match_text_seq("DRY", "RUN")
            return self.expression(Vacuum(this=this, mode=mode, retain=retain, dry_run=dry_run))

        def _parse_describe(self) -> exp.Expr:
            # `DESCRIBE HISTORY.x` describes a table called history; leave that to Spark.
            if (
                self._curr.text.upper() == "HISTORY"
                and self._next
                and self._next.token_type != TokenType.DOT
            ):
                self._advance()
                return self._parse_describe_history()
            return super()._parse_describe()

        def _parse_describe_history(self) -> DescribeHistory:
            this = self._parse_delta_target()
            limit = None
            if self._match(TokenType.LIMIT):
                limit = self._parse_number()
                if limit is None:
                    self.raise_error("Expected a number after LIMIT")
            return self.expression(DescribeHistory(this=this, limit=limit))

        def _parse_restore(self) -> Restore:
            self._match(TokenType.TABLE)
            this = self._parse_table_parts()
            self._match_text_seq("TO")
            version = self._parse_version()
            if version is None or version.text("kind") != "AS OF":
                self.raise_error("Expected VERSION AS OF <n> or TIMESTAMP AS OF <timestamp>")
            return self.expression(Restore(this=this, version=version))

        def _parse_alter_table_unset(self) -> UnsetTblProperties:
            if not self._match_text_seq("TBLPROPERTIES"):
                self.raise_error("Expected TBLPROPERTIES after UNSET")
            exists = self._parse_exists()
            keys = self._parse_wrapped_csv(self._parse_property_key)
            return self.expression(UnsetTblProperties(expressions=keys, exists=exists))

        def _parse_property_key(self) -> exp.Expr | None:
            """A property key, normalised like the keys of ``SET TBLPROPERTIES``."""
            key = self._parse_string() or self._parse_column()
            if isinstance(key, exp.Column):
                return key.to_dot() if len(key.parts) > 1 else exp.var(key.name)
            return key

        def _parse_merge(self) -> exp.Merge:
            schema_evolution = self._match_text_seq("WITH", "SCHEMA", "EVOLUTION")
            merge = super()._parse_merge()
            if schema_evolution:
                # Set after construction: exp.Merge does not declare this arg, and sqlglot's
                # validation rejects undeclared args when running under pytest.
                merge.set("schema_evolution", True)
            return merge

    class Generator(Spark.Generator):
        TRANSFORMS = {
            **Spark.Generator.TRANSFORMS,
            DescribeHistory: lambda self, e: self.describehistory_sql(e),
            Optimize: lambda self, e: self.optimize_sql(e),
            Restore: lambda self, e: self.restore_sql(e),
            UnsetTblProperties: lambda self, e: self.unsettblproperties_sql(e),
            Vacuum: lambda self, e: self.vacuum_sql(e),
        }

        # Leading comments are rendered before the statement, as for DESCRIBE or DELETE.
        WITH_SEPARATED_COMMENTS = (
            *Spark.Generator.WITH_SEPARATED_COMMENTS,
            DescribeHistory,
            Optimize,
            Restore,
            Vacuum,
        )

        def optimize_sql(self, expression: Optimize) -> str:
            full = " FULL" if expression.args.get("full") else ""
            where = self.sql(expression, "where")
            zorder = self.expressions(expression, key="zorder", flat=True)
            zorder = f"{self.seg('ZORDER BY')} ({zorder})" if zorder else ""
            return f"OPTIMIZE {self.sql(expression, 'this')}{full}{where}{zorder}"

        def vacuum_sql(self, expression: Vacuum) -> str:
            mode = expression.args.get("mode")
            mode = f" {mode}" if mode else ""
            retain = self.sql(expression, "retain")
            retain = f" RETAIN {retain} HOURS" if retain else ""
            dry_run = " DRY RUN" if expression.args.get("dry_run") else ""
            return f"VACUUM {self.sql(expression, 'this')}{mode}{retain}{dry_run}"

        def describehistory_sql(self, expression: DescribeHistory) -> str:
            limit = self.sql(expression, "limit")
            limit = f" LIMIT {limit}" if limit else ""
            return f"DESCRIBE HISTORY {self.sql(expression, 'this')}{limit}"

        def restore_sql(self, expression: Restore) -> str:
            table = self.sql(expression, "this")
            return f"RESTORE TABLE {table} TO {self.sql(expression, 'version')}"

        def unsettblproperties_sql(self, expression: UnsetTblProperties) -> str:
            exists = " IF EXISTS" if expression.args.get("exists") else ""
            keys = self.expressions(expression, flat=True)
            return f"UNSET TBLPROPERTIES{exists} ({keys})"

        def merge_sql(self, expression: exp.Merge) -> str:
            if not expression.args.get("schema_evolution"):
                return super().merge_sql(expression)
            # Render the MERGE without its CTEs so the keyword is certainly at the start.
            body = expression.copy()
            body.set("with_", None)
            sql = super().merge_sql(body)
            sql = "MERGE WITH SCHEMA EVOLUTION INTO" + sql[len("MERGE INTO") :]
            return self.prepend_ctes(expression, sql)


# --------------------------------------------------------------------------- helpers


def parse_statement(sql: str, *, allow_command: bool = False) -> exp.Expression:
    """Parse exactly one SQL statement with the :class:`Delta` dialect.

    Raises ``sqlglot.errors.ParseError`` when the text is not valid, is empty or holds
    more than one statement, and (unless ``allow_command`` is true) when sqlglot could
    only fall back to an opaque ``exp.Command`` (e.g. ``SHOW TABLES``).
    """
    try:
        statements = [s for s in Delta().parse(sql) if s is not None]
    except TokenError as error:
        raise ParseError(str(error)) from error

    if len(statements) != 1:
        raise ParseError(f"Expected exactly one SQL statement, found {len(statements)}")

    (statement,) = statements
    if isinstance(statement, exp.Command) and not allow_command:
        raise ParseError(f"Unsupported statement, parsed only as a generic command: {sql!r}")
    if not isinstance(statement, exp.Expression):
        raise ParseError(f"Unexpected parse result {type(statement).__name__} for {sql!r}")
    return statement


def to_sql(expression: exp.Expr, pretty: bool = False) -> str:
    """Generate SQL text for ``expression`` with the :class:`Delta` dialect."""
    return Delta().generate(expression, pretty=pretty)
