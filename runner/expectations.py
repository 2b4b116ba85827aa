"""Row expectations: named SQL conditions a model's batch rows must meet, each with an action.

Declared in ``config(expectations={...})``::

    expectations={
        'has_amount': 'amount IS NOT NULL',                                    # warn: count only
        'amount_positive': {'expect': 'amount > 0', 'on_violation': 'drop'},   # row not applied
        'known_status': {'expect': "status IN ('new', 'paid')", 'on_violation': 'quarantine'},
        'has_key': {'expect': 'order_id IS NOT NULL', 'on_violation': 'fail'}, # batch stops
    }

A row meets an expectation only when its condition is true: false and NULL both fail it. This
module is the pure half (validation with file and line); runner/spark/expectations.py applies
them to a batch.
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
