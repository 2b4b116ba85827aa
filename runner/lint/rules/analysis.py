"""The rules of ``runner lint --analyze``: Spark's analyzer, not a ``check()``, finds them.

They are ``RuleInfo``s, not ``Rule``s: ``runner.lint.analyze`` turns Spark's answers into their
findings, and the engine applies project.yml's severity, ``disable`` and ``-- noqa`` to them as to
any rule.
"""

from __future__ import annotations

from runner.lint.base import ERROR, RuleInfo
from runner.lint.findings import WARNING


class SparkAnalysisError(RuleInfo):
    """Spark's analyzer rejects a statement: unresolved column or table, type mismatch, ...

    Only with `runner lint --analyze`. Spark starts locally; each model's batch view is an empty
    temporary view with the stream's columns and every target an empty Delta table with the
    target's columns, in a scratch directory (the project's own tables are never touched). Then
    the model's statements for the first batch and its maintenance statements are analyzed in
    order: temporary views are created, DML is EXPLAINed. The message is Spark's first line.
    Analysis of a model stops at its first failing statement (later ones would fail because of
    it), and a statement that does not parse (DL001) is not reported again.
    """

    code = "DL100"
    severity = ERROR


class AnalysisSkipped(RuleInfo):
    """`--analyze` could not analyze the model: its stream has no static schema, ...

    A stream whose columns are known only at run time (a Delta table by path without `schema`,
    for example) gives the batch view no columns to stand in with, so the model's statements
    are not sent to Spark. Declare the stream's `schema` to have them analyzed.
    """

    code = "DL101"
    severity = WARNING
