"""The SQL linter: Delta-aware rules over rendered models, reported at source lines."""

from runner.lint.base import ERROR, WARNING, Rule, Violation
from runner.lint.engine import LintResult, lint_loaded, lint_project
from runner.lint.rules import all_rules

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
