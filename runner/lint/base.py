"""What every lint rule is: a class with a code, a default severity and ``check(context)``,
and what it finds: ``Violation``s, made with ``self.violation(context, location, message)``.

The rule set is listed once, in the registry ``runner.lint.rules`` (``all_rules()``); the class
docstring is the rule's documentation (its first line is the summary shown in
``docs/compile-and-lint.md``). Of ``runner.lint`` this module imports only ``context`` (what a
rule sees), which knows nothing of rules.
"""

from __future__ import annotations

from typing import ClassVar

from runner.lint.context import Location, ModelContext
from runner.lint.findings import ERROR, Violation
from runner.project import Project


class RuleInfo:
    """What documents a rule: its code, default severity and docstring."""

    code: ClassVar[str] = ""
    severity: ClassVar[str] = ERROR
    # Codes whose findings on the line of one of this rule's findings are its consequences:
    # one cause, one finding (the engine drops them; see engine.without_consequences). The
    # more precise rule names the cause, e.g. DL007's unknown ref is why DL010's render fails.
    explains: ClassVar[frozenset[str]] = frozenset()
    # Does the rule find what Spark refuses (parser, analyzer, Delta's checks)? The
    # differential test against Spark's analyzer (bench/lint_agreement.py) holds these rules
    # to Spark's verdicts; the others find what Spark runs but what damages a streaming target.
    spark_rejects: ClassVar[bool] = False

    @classmethod
    def consequences(cls) -> frozenset[str]:
        """``explains``, and for a rule that finds what Spark refuses, Spark's own finding
        under `--analyze` (DL100) on the same line: the same cause, found twice."""
        return cls.explains | (frozenset({"DL100"}) if cls.spark_rejects else frozenset())

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

    @classmethod
    def violation(cls, context: ModelContext, location: Location, message: str) -> Violation:
        """A finding of this rule in ``context``'s model, at ``location``."""
        return Violation(
            path=context.path,
            line=location.line,
            col=location.col,
            code=cls.code,
            message=message,
            severity=cls.severity or ERROR,
            rule=cls.__name__,
        )


class Rule(RuleInfo):
    """Base class of lint rules. Subclasses set ``code`` and ``severity`` and a docstring."""

    def check(self, context: ModelContext) -> list[Violation]:
        raise NotImplementedError

    def check_project(self, project: Project) -> list[Violation]:
        """Findings outside the model files (streams/*.yml); most rules have none."""
        return []
