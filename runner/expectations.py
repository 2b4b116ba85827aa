"""Row expectations: named SQL conditions a model's batch rows must meet, each with an action.

Declared in ``config(expectations={...})``::

    expectations={
        'has_amount': 'amount IS NOT NULL',                                    # warn: count only
        'amount_positive': {'expect': 'amount > 0', 'on_violation': 'drop'},   # row not applied
        'known_status': {'expect': "status IN ('new', 'paid')", 'on_violation': 'quarantine'},
        'has_key': {'expect': 'order_id IS NOT NULL', 'on_violation': 'fail'}, # batch stops
    }

A row meets an expectation only when its condition is true: false and NULL both fail it. This
module is the pure half: validation with file and line, and the SQL that checks a batch
(``expectation_checks``), which ``runner compile`` prints and runner/spark/batch/expectations.py
runs on the batch's session, text for text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from runner.choices import is_one_of
from runner.error_text import first_line
from runner.errors import ConfigError

ExpectationAction = Literal["warn", "drop", "quarantine", "fail"]
ACTIONS: tuple[ExpectationAction, ...] = get_args(ExpectationAction)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEYS = ("expect", "on_violation")
FAILED_COLUMN = "__failed_expectations"
SAMPLE_ROWS = 5  # failing rows a 'fail' expectation shows in its error
# the columns of the counts query after each expectation's failures: rows, not failures
QUARANTINED_ROWS = "__quarantined_rows"
DROPPED_ROWS = "__dropped_rows"


@dataclass(frozen=True)
class Expectation:
    """One named condition and what happens to a row that does not meet it."""

    name: str
    condition: str
    action: ExpectationAction


def parse_expectations(value: Any, *, file: Path, line: int) -> tuple[Expectation, ...]:
    """``config(expectations=...)`` as Expectation values, in declaration order; any mistake is
    a ConfigError at ``line`` (the line of the ``expectations=`` argument)."""

    def fail(message: str) -> ConfigError:
        return ConfigError(
            f"expectations: {message}",
            file=file,
            line=line,
            hint="for example: expectations={'amount_positive': "
            "{'expect': 'amount > 0', 'on_violation': 'drop'}}",
        )

    if not isinstance(value, dict):
        raise fail(f"must be a dict of name -> condition, got {type(value).__name__}")
    parsed = []
    for name, spec in value.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise fail(f"name {name!r} must be an identifier (letters, digits, _)")
        if isinstance(spec, str):
            spec = {"expect": spec}
        if not isinstance(spec, dict):
            raise fail(f"'{name}' must be a condition string or a dict with 'expect'")
        unknown = sorted(set(spec) - set(_KEYS))
        if unknown:
            raise fail(f"'{name}' has unknown key(s) {', '.join(map(str, unknown))}")
        condition = spec.get("expect")
        if not isinstance(condition, str) or not condition.strip():
            raise fail(f"'{name}' needs 'expect': a SQL condition such as 'amount > 0'")
        action = spec.get("on_violation", "warn")
        if not is_one_of(action, ACTIONS):
            raise fail(
                f"'{name}': on_violation must be one of {', '.join(ACTIONS)}, got {action!r}"
            )
        problem = condition_problem(condition)
        if problem:
            raise fail(f"'{name}': the condition does not parse: {problem}")
        parsed.append(Expectation(name, condition.strip(), action))
    return tuple(parsed)


def condition_problem(condition: str) -> str | None:
    """Why ``condition`` is not one SQL boolean expression (None if it is), by the lint parser."""
    from sqlglot.errors import ParseError

    from runner.sql.dialect import parse_statement

    try:  # wrapped in a query: a condition that swallows the rest (a stray ';', a comment) fails
        parse_statement(f"SELECT 1 FROM t WHERE ({condition})")
    except ParseError as exc:
        return first_line(exc)
    return None


@dataclass(frozen=True)
class ExpectationChecks:
    """The SQL that checks one batch of a model against its expectations, in the order it runs.

    The batch arrives registered as ``input_view``; ``check`` adds each row's failed
    expectation names; ``counts`` is one row (the batch's rows, each expectation's failing
    rows, then the rows quarantined and the rows dropped, each row once); ``quarantine``
    selects what goes to ``quarantine.<model>`` (None without a ``quarantine`` expectation);
    ``batch`` registers the rows the model's statements read.
    """

    model_name: str
    input_view: str
    checked_view: str
    check: str
    counts: str
    quarantine: str | None
    batch: str
    columns: tuple[str, ...]
    failing: tuple[str, ...]  # the names of the 'fail' expectations

    def sample(self, name: str, limit: int) -> str:
        """The first ``limit`` rows failing expectation ``name``, with the batch's columns."""
        return (
            f"SELECT {_column_list(self.columns)}\nFROM {self.checked_view}\n"
            f"WHERE array_contains({FAILED_COLUMN}, {_literal(name)})\nLIMIT {limit}"
        )

    def steps(self, quarantine_table: str) -> list[tuple[str, str]]:
        """(what it does, SQL) for each statement, as ``runner compile`` shows them."""
        steps = [
            (
                f"each row's failed expectations (the batch arrives as {self.input_view})",
                self.check,
            ),
            (
                "counts per expectation, for the progress line, the event log and `runner "
                "history`; a 'fail' expectation with failing rows stops the batch here, before "
                "any write",
                self.counts,
            ),
        ]
        steps += [
            (
                f"only when '{name}' (fail) has failing rows: the first {SAMPLE_ROWS}, shown in "
                "the error; the batch stops",
                self.sample(name, SAMPLE_ROWS),
            )
            for name in self.failing
        ]
        if self.quarantine is not None:
            steps.append(
                (
                    f"appended to {quarantine_table} when a 'quarantine' expectation has "
                    f"failing rows, under txnAppId <query id>:{self.model_name}:quarantine:"
                    "expectations and txnVersion = the batch id (a replay writes them once)",
                    self.quarantine,
                )
            )
        steps.append(("the rows the model's statements read as `batch`", self.batch))
        return steps


def expectation_checks(
    expectations: tuple[Expectation, ...],
    *,
    model_name: str,
    stream: str,
    batch_view: str,
    batch_id: int,
    columns: list[str],
    unique_keys: list[str],
) -> ExpectationChecks:
    """The SQL that applies ``expectations`` to batch ``batch_id`` whose columns are
    ``columns``: rows failing a ``drop`` or ``quarantine`` expectation are left out of
    ``batch_view``; a quarantined row is kept with its position (the batch and its key), the
    row as JSON and the names of every expectation it fails."""
    input_view, checked_view = f"{model_name}__input", f"{model_name}__checked"
    checks = ",\n".join(
        f"    CASE WHEN coalesce(({e.condition}), false) THEN NULL ELSE {_literal(e.name)} END"
        for e in expectations
    )
    check = (
        f"CREATE OR REPLACE TEMPORARY VIEW {checked_view} AS\n"
        f"SELECT *, filter(array(\n{checks}\n  ), name -> name IS NOT NULL) AS {FAILED_COLUMN}\n"
        f"FROM {input_view}"
    )
    counted = "".join(
        f",\n  count_if(array_contains({FAILED_COLUMN}, {_literal(e.name)})) AS {e.name}"
        for e in expectations
    )
    quarantined = [e.name for e in expectations if e.action == "quarantine"]
    dropped = [e.name for e in expectations if e.action == "drop"]
    removed = dropped + quarantined
    # rows, not failures: a row failing two expectations is one row quarantined (or dropped);
    # one failing a 'drop' and a 'quarantine' expectation is quarantined
    if quarantined:
        counted += f",\n  count_if({_overlaps(quarantined)}) AS {QUARANTINED_ROWS}"
    if dropped:
        kept_out = (
            f"{_overlaps(dropped)} AND NOT {_overlaps(quarantined)}"
            if quarantined
            else (_overlaps(dropped))
        )
        counted += f",\n  count_if({kept_out}) AS {DROPPED_ROWS}"
    counts = f"SELECT count(1) AS __rows{counted}\nFROM {checked_view}"
    quarantine = None
    if quarantined:
        keys = [
            f"concat({_literal(k + '=')}, coalesce(CAST({_quote(k)} AS STRING), 'NULL'))"
            for k in unique_keys
            if k in columns
        ]
        where = _literal(f"stream {stream}, batch {batch_id}")
        quarantine = (
            f"SELECT\n  concat_ws(', ', {', '.join([where, *keys])}) AS position,\n"
            f"  to_json(struct({_column_list(columns)})) AS raw,\n"
            f"  concat('failed expectation(s): ', array_join({FAILED_COLUMN}, ', ')) AS reason\n"
            f"FROM {checked_view}\nWHERE {_overlaps(quarantined)}"
        )
    kept = f"\nWHERE NOT {_overlaps(removed)}" if removed else ""
    batch = (
        f"CREATE OR REPLACE TEMPORARY VIEW {batch_view} AS\n"
        f"SELECT {_column_list(columns)}\nFROM {checked_view}{kept}"
    )
    failing = tuple(e.name for e in expectations if e.action == "fail")
    return ExpectationChecks(
        model_name,
        input_view,
        checked_view,
        check,
        counts,
        quarantine,
        batch,
        tuple(columns),
        failing,
    )


def _overlaps(names: list[str]) -> str:
    return f"arrays_overlap({FAILED_COLUMN}, array({', '.join(map(_literal, names))}))"


def _literal(text: str) -> str:
    """A Spark SQL string literal (backslash escapes, Spark's default)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _quote(column: str) -> str:
    return column if _NAME.match(column) else "`" + column.replace("`", "``") + "`"


def _column_list(columns: list[str] | tuple[str, ...]) -> str:
    return ", ".join(_quote(c) for c in columns)
