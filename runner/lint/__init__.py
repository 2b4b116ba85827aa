"""The SQL linter: Delta-aware rules over rendered models, reported at source lines.

The names below are imported on first use, so that the command line can read
``runner.lint.formats`` (the ``--format`` choices) without loading sqlglot and the rules.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from runner.lint.base import Rule
    from runner.lint.engine import lint_loaded, lint_project
    from runner.lint.findings import ERROR, WARNING, LintResult, Violation
    from runner.lint.rules import all_rules

_HOMES = {
    "ERROR": "runner.lint.findings",
    "WARNING": "runner.lint.findings",
    "Rule": "runner.lint.base",
    "Violation": "runner.lint.findings",
    "LintResult": "runner.lint.findings",
    "lint_loaded": "runner.lint.engine",
    "lint_project": "runner.lint.engine",
    "all_rules": "runner.lint.rules",
}

__all__ = [
    "ERROR",
    "WARNING",
    "LintResult",
    "Rule",
    "Violation",
    "all_rules",
    "lint_loaded",
    "lint_project",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(home), name)
