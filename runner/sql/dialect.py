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

:func:`parse_statement` is the strict entry point: this grammar, plus the checks of what Spark's
grammar rejects and sqlglot's parser accepts, which are a table of their own in
``runner.sql.checks``.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, TokenError
from sqlglot.generators.spark import SparkGenerator
from sqlglot.parsers.spark import SparkParser
from sqlglot.tokens import Token, TokenType

from runner.sql.checks import check_tokens, check_tree, is_name_list

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

    class Parser(SparkParser):
        DELTA_STATEMENT_PARSERS: t.ClassVar[dict[str, _DeltaStatementParser]] = {
            "OPTIMIZE": lambda self: self._parse_optimize(),
            "RESTORE": lambda self: self._parse_restore(),
            "VACUUM": lambda self: self._parse_vacuum(),
        }

        ALTER_PARSERS = {
            **Spark.Parser.ALTER_PARSERS,
            "UNSET": lambda self: self._parse_alter_table_unset(),
        }

        # Where the query of the CREATE being parsed ended (a token index), else None.
        _create_query_end: int | None = None

        def _parse_create(self) -> exp.Create | exp.Command:
            self._create_query_end = None
            try:
                return super()._parse_create()
            finally:
                self._create_query_end = None

        def _parse_ddl_select(self) -> exp.Expr | None:
            query = super()._parse_ddl_select()
            if query is not None:
                self._create_query_end = self._index
            return query

        def _parse_as_command(self, start: Token) -> exp.Command:
            """sqlglot keeps a CREATE whose query it could not read to the end as an opaque
            command; in Spark's grammar nothing follows a view's or a table's query (``AS
            query`` is the statement's last part), so the token the query stopped at is the
            syntax error Spark reports (``SELECT x AS map('k', y)``: an alias is a name)."""
            if (
                start.token_type == TokenType.CREATE
                and self._create_query_end is not None
                and self._curr is not None
            ):
                self.raise_error(
                    "Unexpected token: nothing follows the query of a CREATE", self._curr
                )
            return super()._parse_as_command(start)

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
            target = self._parse_string() or self._parse_table_parts()
            if target is None:
                self.raise_error("Expected a table name or path")
                return exp.Null()  # reached only when the parser collects errors
            return target

        def _parse_optimize(self) -> Optimize:
            this = self._parse_delta_target()
            full = bool(self._match(TokenType.FULL))
            where = self._parse_optimize_where() if self._match(TokenType.WHERE) else None
            zorder = None
            if self._match_text_seq("ZORDER", "BY"):
                zorder = self._parse_wrapped_csv(self._parse_column, optional=True)
                if not zorder:
                    self.raise_error("Expected at least one ZORDER BY column")
            return self.expression(Optimize(this=this, full=full, where=where, zorder=zorder))

        def _parse_optimize_where(self) -> exp.Where:
            """Delta's grammar takes the predicate as raw text up to a trailing ``ZORDER BY``
            (``predicateToken: .+?``) and parses it only when the command runs, so Spark's
            parser accepts any text there. It is parsed as an expression when it is one, else
            kept as an ``exp.Var`` of its text."""
            start = self._index
            end = _optimize_predicate_end(self._tokens, start)
            if end == start:
                self.raise_error("Expected a predicate after WHERE")
            raw = self._find_sql(self._tokens[start], self._tokens[end - 1])
            condition: exp.Expr | None = None
            try:
                condition = Delta().parse_into(exp.Condition, raw)[0]
            except (ParseError, TokenError):
                condition = None
            self._advance(end - start)
            return self.expression(exp.Where(this=condition or exp.var(raw)))

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

        def _parse_describe(self) -> exp.Expr:  # type: ignore[override]  # or DescribeHistory
            # `DESCRIBE HISTORY.x` describes a table called history; leave that to Spark.
            if (
                self._curr.text.upper() == "HISTORY"
                and self._next
                and self._next.token_type != TokenType.DOT
            ):
                self._advance()
                return self._parse_describe_history()
            describe = super()._parse_describe()
            if self._curr and self._curr.token_type in (TokenType.VAR, TokenType.IDENTIFIER):
                # DESCRIBE [TABLE] tbl column: Spark describes one column
                describe.set("expressions", [self._parse_column()])
            return describe

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
            """Spark's MERGE grammar, strictly: sqlglot's own parser makes INTO, ON and THEN
            optional, so it accepts statements Spark rejects (``SqlBaseParser.g4``)."""
            schema_evolution = self._match_text_seq("WITH", "SCHEMA", "EVOLUTION")
            if not self._match(TokenType.INTO):
                self.raise_error("Expected INTO after MERGE")
            target = self._parse_table_parts()
            if target is None:
                self.raise_error("Expected the MERGE target table")
                return exp.Merge()
            alias = self._parse_table_alias()
            if alias is not None:
                target.set("alias", alias)
            if not self._match(TokenType.USING):
                self.raise_error("Expected USING after the MERGE target")
            using = self._parse_table()
            if using is None:
                self.raise_error("Expected a table or (query) after USING")
            if not self._match(TokenType.ON):
                self.raise_error("Expected ON <condition> after the MERGE source")
            on = self._parse_disjunction()
            if on is None:
                self.raise_error("Expected a condition after ON")
            merge = self.expression(
                exp.Merge(this=target, using=using, on=on, whens=self._parse_strict_whens())
            )
            if schema_evolution:
                # Set after construction: exp.Merge does not declare this arg, and sqlglot's
                # validation rejects undeclared args when running under pytest.
                merge.set("schema_evolution", True)
            return merge

        def _parse_strict_whens(self) -> exp.Whens:
            """``WHEN MATCHED ...``* then ``WHEN NOT MATCHED [BY TARGET] ...``* then
            ``WHEN NOT MATCHED BY SOURCE ...``*, each with ``THEN`` and a valid action."""
            whens: list[exp.Expr] = []
            rank = 0  # clause kinds come in Spark's order (its grammar's three lists)
            while self._match(TokenType.WHEN):
                matched = not self._match(TokenType.NOT)
                if not self._match_text_seq("MATCHED"):
                    self.raise_error("Expected MATCHED after WHEN [NOT]")
                source = False
                if not matched and self._match_text_seq("BY"):
                    if self._match_text_seq("SOURCE"):
                        source = True
                    elif not self._match_text_seq("TARGET"):
                        self.raise_error("Expected SOURCE or TARGET after NOT MATCHED BY")
                kind = 0 if matched else (2 if source else 1)
                if kind < rank:
                    self.raise_error(
                        "WHEN clauses must come in the order MATCHED, NOT MATCHED, "
                        "NOT MATCHED BY SOURCE"
                    )
                rank = kind
                condition = self._parse_disjunction() if self._match(TokenType.AND) else None
                if not self._match(TokenType.THEN):
                    self.raise_error("Expected THEN in the WHEN clause")
                then = self._parse_when_action(inserting=kind == 1, star=kind == 0)
                whens.append(
                    self.expression(
                        exp.When(matched=matched, source=source, condition=condition, then=then)
                    )
                )
            return self.expression(exp.Whens(expressions=whens))

        def _parse_when_action(self, *, inserting: bool, star: bool) -> exp.Expr:
            if inserting:
                if not self._match(TokenType.INSERT):
                    self.raise_error("Expected INSERT after WHEN NOT MATCHED ... THEN")
                if self._match(TokenType.STAR):
                    return self.expression(exp.Insert(this=exp.Star()))
                columns = self._parse_wrapped_csv(self._parse_column)
                if not self._match(TokenType.VALUES):
                    self.raise_error("Expected VALUES (...) after the INSERT column list")
                values = self._parse_wrapped_csv(self._parse_disjunction)
                if len(values) != len(columns):
                    self.raise_error("INSERT column list and VALUES differ in length")
                return self.expression(
                    exp.Insert(
                        this=exp.Tuple(expressions=columns),
                        expression=exp.Tuple(expressions=values),
                    )
                )
            if self._match(TokenType.DELETE):
                return self.expression(exp.Var(this="DELETE"))
            if not self._match(TokenType.UPDATE) or not self._match(TokenType.SET):
                self.raise_error("Expected DELETE or UPDATE SET after THEN")
            if star and self._match(TokenType.STAR):
                return self.expression(exp.Update(expressions=[exp.Star()]))
            assignments = self._parse_csv(self._parse_strict_assignment)
            return self.expression(exp.Update(expressions=assignments))

        def _parse_strict_assignment(self) -> exp.Expr | None:
            column = self._parse_column()
            if column is None or not self._match(TokenType.EQ):
                self.raise_error("Expected <column> = <expression> in UPDATE SET")
                return column
            value = self._parse_disjunction()
            if value is None:
                self.raise_error("Expected an expression after = in UPDATE SET")
            return self.expression(exp.EQ(this=column, expression=value))

    class Generator(SparkGenerator):
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


def _optimize_predicate_end(tokens: list[t.Any], start: int) -> int:
    """Where OPTIMIZE's raw WHERE predicate ends, as Delta's parser decides: at the first
    ``ZORDER BY`` whose tail is a complete ZORDER spec up to the end, else at the end."""
    words = [tok.text.upper() for tok in tokens]
    if words and words[-1] == ";":
        words = words[:-1]
    for index in range(start + 1, len(words) - 2):
        if words[index] == "ZORDER" and words[index + 1] == "BY":
            tail = [tok.text for tok in tokens[index + 2 : len(words)]]
            if is_name_list(tail[1:-1] if tail[:1] == ["("] and tail[-1:] == [")"] else tail):
                return index
    return len(words)


def parse_statement(sql: str, *, allow_command: bool = False) -> exp.Expression:
    """Parse exactly one SQL statement with the :class:`Delta` dialect.

    Raises ``sqlglot.errors.ParseError`` when the text is not valid (for sqlglot, or for one of
    ``runner.sql.checks``), is empty or holds more than one statement, and (unless
    ``allow_command`` is true) when sqlglot could only fall back to an opaque ``exp.Command``
    (e.g. ``SHOW TABLES``).
    """
    dialect = Delta()
    try:
        tokens = dialect.tokenize(sql)
        check_tokens(tokens)
        statements = [s for s in dialect.parser().parse(tokens, sql) if s is not None]
    except TokenError as error:
        raise ParseError(str(error)) from error

    if len(statements) != 1:
        raise ParseError(f"Expected exactly one SQL statement, found {len(statements)}")

    (statement,) = statements
    check_tree(statement)
    if isinstance(statement, exp.Command) and not allow_command:
        raise ParseError(f"Unsupported statement, parsed only as a generic command: {sql!r}")
    if not isinstance(statement, exp.Expression):
        raise ParseError(f"Unexpected parse result {type(statement).__name__} for {sql!r}")
    return statement


def to_sql(expression: exp.Expr, pretty: bool = False) -> str:
    """Generate SQL text for ``expression`` with the :class:`Delta` dialect."""
    return Delta().generate(expression, pretty=pretty)
