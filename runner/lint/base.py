"""What every lint rule is: a class with a code, a default severity and ``check(context)``.

The rule set is listed at the bottom of ``runner.lint.rules`` (``all_rules()``); the class
docstring is the rule's documentation (its first line is the summary shown in
``docs/compile-and-lint.md``). This module imports nothing else of ``runner.lint``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from runner.lint.context import ModelContext
    from runner.project import Project

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


class RuleInfo:
    """What documents a rule: its code, default severity and docstring."""

    code: ClassVar[str] = ""
    severity: ClassVar[str] = ERROR

    @classmethod
    def name(cls) -> str:
        return cls.__name__

    @classmethod
    def summary(cls) -> str:
        """The first line of the docstring."""
        return (cls.__doc__ or "").strip().split("\n", 1)[0]

    @classmethod
    def description(cls) -> str:
        """The docstring after its first line, dedented."""
        import inspect

        doc = inspect.cleandoc(cls.__doc__ or "")
        return doc.split("\n", 1)[1].strip() if "\n" in doc else ""


class Rule(RuleInfo):
    """Base class of lint rules. Subclasses set ``code`` and ``severity`` and a docstring."""

    def check(self, context: ModelContext) -> list[Violation]:
        raise NotImplementedError

    def check_project(self, project: Project) -> list[Violation]:
        """Findings outside the model files (streams/*.yml); most rules have none."""
        return []
