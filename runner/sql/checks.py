"""What Spark's grammar requires and sqlglot's parser lets through, as a table of named checks.

sqlglot is lenient: it accepts a bare expression as a statement, unbalanced parentheses in some
places, ``INSERT t SELECT ...`` without INTO, a JOIN with no FROM. Spark rejects all of these,
and the linter must too (the differential test, tests/spark/test_lint_agreement.py, holds it to
Spark's parser). Each rule of that kind is one small function below, run in the order of
``TOKEN_CHECKS`` (on the tokens, before parsing) and ``TREE_CHECKS`` (on the parsed statement);
the first that finds something stops the statement with a ``ParseError``.

``parse_statement`` in ``runner.sql.dialect`` runs them; the grammar itself is in that module.
To add a check: write a function with a docstring that returns the problem or None, and list it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.tokens import Token, TokenType

__all__ = ["TOKEN_CHECKS", "TREE_CHECKS", "check_tokens", "check_tree", "is_name_list"]

# Words a Spark statement may start with; sqlglot also accepts a bare expression (`orders`,
# `OPTIMIZ orders`) or a FROM-first query, which Spark rejects.
STATEMENT_STARTS = frozenset(
    {"ALTER", "ANALYZE", "CACHE", "CLEAR", "COMMENT", "CONVERT", "CREATE", "DELETE", "DESC",
     "DESCRIBE", "DROP", "EXPLAIN", "FSCK", "GENERATE", "GRANT", "INSERT", "LIST", "ADD", "LOAD",
     "MERGE", "MSCK", "OPTIMIZE", "REFRESH", "REORG", "REPAIR", "REPLACE", "RESET", "RESTORE",
     "REVOKE", "SELECT", "SET", "SHOW", "TABLE", "TRUNCATE", "UNCACHE", "UPDATE", "USE",
     "VACUUM", "VALUES", "WITH", "FROM", "("}
)  # fmt: skip
# The word that must follow the first word of a statement, as in Spark's grammar.
REQUIRED_NEXT = {
    "INSERT": ("INTO", "OVERWRITE"),
    "DELETE": ("FROM",),
    "TRUNCATE": ("TABLE",),
}
ALTER_SET_NEXT = frozenset(
    {"TBLPROPERTIES", "LOCATION", "SERDE", "SERDEPROPERTIES", "FILEFORMAT", "OWNER", "NOT",
     "DEFAULT", "DATA", "ROW"}
)  # fmt: skip
QUERY_STARTS = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "FROM"})


@dataclass(frozen=True)
class StatementTokens:
    """The tokens of one statement as the checks see them: no ``;``, and for OPTIMIZE only
    the part before WHERE (Delta takes the predicate as raw text, which may hold anything).
    ``words`` are the tokens' texts upper-cased; ``first`` is the first word."""

    tokens: list[Token]
    words: list[str]

    @property
    def first(self) -> str:
        return self.words[0]


# A problem a token check found: the token to point at and the message.
Problem = tuple[Token, str]
TokenCheck = Callable[[StatementTokens], Problem | None]
TreeCheck = Callable[[exp.Expr], str | None]


# -- token checks --------------------------------------------------------------------------


def balanced_parentheses(statement: StatementTokens) -> Problem | None:
    """Every ``(`` is closed, and no ``)`` comes before its ``(``."""
    opened: list[Token] = []
    for token in statement.tokens:
        if token.token_type == TokenType.L_PAREN:
            opened.append(token)
        elif token.token_type == TokenType.R_PAREN:
            if not opened:
                return token, "Unbalanced parentheses: ')' without '('"
            opened.pop()
    if opened:
        return opened[-1], "Unbalanced parentheses: '(' is never closed"
    return None


def statement_keyword_first(statement: StatementTokens) -> Problem | None:
    """The statement starts with a word Spark's statements start with (not ``orders``)."""
    if statement.first not in STATEMENT_STARTS:
        token = statement.tokens[0]
        return token, f"Expected a statement, found '{token.text}'"
    return None


def required_second_word(statement: StatementTokens) -> Problem | None:
    """INTO or OVERWRITE after INSERT, FROM after DELETE, TABLE after TRUNCATE."""
    required = REQUIRED_NEXT.get(statement.first)
    words, tokens = statement.words, statement.tokens
    if required and (len(words) < 2 or words[1] not in required):
        after = tokens[1] if len(tokens) > 1 else tokens[0]
        return after, f"Expected {' or '.join(required)} after {statement.first}"
    return None


def property_after_alter_set(statement: StatementTokens) -> Problem | None:
    """``ALTER ... SET`` is followed by what may be set: TBLPROPERTIES, LOCATION, ..."""
    if statement.first != "ALTER":
        return None
    words = statement.words
    for index, (token, depth) in enumerate(_with_depth(statement)):
        if depth == 0 and words[index] == "SET" and index > 2:
            following = words[index + 1] if index + 1 < len(words) else ""
            if following not in ALTER_SET_NEXT:
                return token, "Expected TBLPROPERTIES (or LOCATION, ...) after SET"
    return None


def query_after_insert_target(statement: StatementTokens) -> Problem | None:
    """``INSERT INTO t`` is followed by a query, not ``*`` (``INSERT INTO t *``)."""
    if statement.first != "INSERT":
        return None
    words = statement.words
    for index, (token, depth) in enumerate(_with_depth(statement)):
        star_after_table = words[index] == "*" and words[index - 1] not in ("SELECT", ",", ".")
        if depth == 0 and star_after_table:
            return token, "Expected a query after INSERT INTO <table>"
    return None


def select_after_from_first(statement: StatementTokens) -> Problem | None:
    """Spark's FROM-first query is ``FROM t`` alone, or ``FROM t SELECT ...``."""
    if statement.first != "FROM":
        return None
    tokens = statement.tokens
    top_level = {
        statement.words[i] for i, (_, depth) in enumerate(_with_depth(statement)) if not depth
    }
    alone = not {"SELECT", "INSERT"} & top_level
    if alone and len(tokens) > 1 and not is_name_list([tok.text for tok in tokens[1:]]):
        return tokens[1], "Expected SELECT after FROM <table>"
    return None


def as_before_view_query(statement: StatementTokens) -> Problem | None:
    """``CREATE ... VIEW v [(columns)] AS <query>``: the view's query follows AS."""
    words = statement.words
    if statement.first != "CREATE" or "VIEW" not in words:
        return None
    for index in range(words.index("VIEW") + 1, len(words)):
        if words[index] in QUERY_STARTS:
            before = index - 1
            while before > 0 and words[before] == "(":
                before -= 1
            if words[before] != "AS":
                return statement.tokens[index], "Expected AS before the view's query"
            break
    return None


def lambda_parameters(statement: StatementTokens) -> Problem | None:
    """A lambda's parameters are ``x -> ...`` or ``(x, y, ...) -> ...``: Spark's grammar has no
    ``(x) -> ...`` nor ``() -> ...`` (``extra input '->'``)."""
    tokens = statement.tokens
    for index, token in enumerate(tokens):
        if token.token_type != TokenType.ARROW or index < 2:
            continue
        if tokens[index - 1].token_type != TokenType.R_PAREN:
            continue
        inside = 0
        opening = index - 2
        while opening >= 0 and tokens[opening].token_type != TokenType.L_PAREN:
            if tokens[opening].token_type in (TokenType.COMMA, TokenType.R_PAREN):
                inside = -1  # two or more parameters, or not a parameter list
                break
            inside += 1
            opening -= 1
        if 0 <= inside <= 1 and opening >= 0:
            return token, "A lambda of one parameter is x -> ..., without parentheses"
    return None


# Run in this order; the first problem found is the one reported.
TOKEN_CHECKS: tuple[TokenCheck, ...] = (
    balanced_parentheses,
    statement_keyword_first,
    required_second_word,
    property_after_alter_set,
    query_after_insert_target,
    select_after_from_first,
    as_before_view_query,
    lambda_parameters,
)


# -- tree checks ---------------------------------------------------------------------------


def join_has_from(statement: exp.Expr) -> str | None:
    """No SELECT joins without a FROM (sqlglot builds one for ``SELECT * JOIN t``)."""
    for select in statement.find_all(exp.Select):
        if select.args.get("joins") and not (select.args.get("from_") or select.args.get("from")):
            return "JOIN without FROM in a SELECT"
    return None


def insert_has_query(statement: exp.Expr) -> str | None:
    """An INSERT inserts the rows of a query (SELECT, WITH, VALUES), not an expression."""
    if isinstance(statement, exp.Insert) and not isinstance(
        statement.expression, (exp.Query, exp.Values)
    ):
        return "Expected a query (SELECT, WITH, VALUES) after INSERT INTO <table>"
    return None


# Shapes sqlglot builds that Spark's grammar has no rule for, checked in this order.
TREE_CHECKS: tuple[TreeCheck, ...] = (
    join_has_from,
    insert_has_query,
)


# -- running them --------------------------------------------------------------------------


def check_tokens(tokens: list[Token]) -> None:
    """Raise a ``ParseError`` at the token of the first problem ``TOKEN_CHECKS`` find."""
    statement = _statement_tokens(tokens)
    if statement is None:
        return
    for check in TOKEN_CHECKS:
        problem = check(statement)
        if problem is not None:
            raise _token_error(*problem)


def check_tree(statement: exp.Expr) -> None:
    """Raise a ``ParseError`` with the message of the first problem ``TREE_CHECKS`` find."""
    for check in TREE_CHECKS:
        message = check(statement)
        if message is not None:
            raise ParseError(message)


def is_name_list(texts: list[str]) -> bool:
    """``a, b.c, d``: dotted names separated by commas (also what ends OPTIMIZE's WHERE)."""
    expect_name = True
    for text in texts:
        if expect_name:
            if text in (",", ".", "(", ")"):
                return False
            expect_name = False
        elif text in (",", "."):
            expect_name = True
        else:
            return False
    return bool(texts) and not expect_name


def _statement_tokens(tokens: list[Token]) -> StatementTokens | None:
    tokens = [tok for tok in tokens if tok.token_type != TokenType.SEMICOLON]
    if not tokens:
        return None
    words = [tok.text.upper() for tok in tokens]
    if words[0] == "OPTIMIZE" and "WHERE" in words:  # the raw predicate may hold anything
        tokens = tokens[: words.index("WHERE")]
        words = words[: len(tokens)]
    return StatementTokens(tokens, words)


def _with_depth(statement: StatementTokens) -> list[tuple[Token, int]]:
    """Each token with its parenthesis depth, counted after the token (``(`` is at depth 1)."""
    depth = 0
    found = []
    for token, word in zip(statement.tokens, statement.words, strict=True):
        depth += word == "("
        depth -= word == ")"
        found.append((token, depth))
    return found


def _token_error(token: Token, message: str) -> ParseError:
    return ParseError(
        f"{message}. Line {token.line}, Col: {token.col}.",
        errors=[
            {"description": message, "line": token.line, "col": token.col, "highlight": token.text}
        ],
    )
