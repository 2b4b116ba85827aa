"""What a lint run finds: ``Violation``s and the ``LintResult`` that holds them.

Apart from the rules (``base``) and the engine, so that what reads results (the report formats,
the result cache) imports neither sqlglot nor the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True, order=True)
class Violation:
    """One finding, located in the source model (1-based line and column)."""

    path: str  # project-relative path of the model file
    line: int
    col: int
    code: str
    message: str
    severity: str = ERROR
    rule: str = ""


@dataclass(frozen=True)
class LintResult:
    """Findings of one lint run, sorted by file, line, column and code."""

    root: Path
    violations: tuple[Violation, ...]
    models: int
    statements: int
    seconds: float
    cached: bool = False  # read from the result cache (runner/lint/result_cache.py)

    @property
    def errors(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == ERROR]

    @property
    def warnings(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == WARNING]

    def exit_code(self, strict: bool = False) -> int:
        """1 when there are errors (or, with ``strict``, warnings), else 0."""
        return 1 if self.errors or (strict and self.warnings) else 0
