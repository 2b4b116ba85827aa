"""The SQL linter: Delta-aware rules over rendered models, reported at source lines."""

from runner.lint.base import ERROR, WARNING, Rule, Violation, all_rules
from runner.lint.engine import LintResult, lint_loaded, lint_project

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
