"""Every lint rule, listed once: the engine and the docs generator read only this registry.

One module per family, one class per rule (the class name is the rule's name, ``code`` and
``severity`` its identity, the docstring its documentation in docs/compile-and-lint.md):

* ``statements``: syntax, statements run together or opaque, projections, whole-target DML
* ``merge``: a MERGE into the model's target (ON keys, deduplicated and deterministic source,
  the sequence guard, clauses that reach past the batch)
* ``tables``: the Delta tables written and read (ZORDER BY, VACUUM retention, Change Data Feed)
* ``templates``: unknown refs, streams and macros; models that do not render
* ``columns``: every column a statement names resolves in the relations it reads or writes;
  INSERT column counts
* ``cdc``: the column arguments of the CDC macros (``merge()``, ``scd2()``)
* ``analyzer``: what Spark's and Delta's analysis refuses without data (MERGE clauses, OPTIMIZE
  WHERE, GROUP BY, functions), named by Spark's error class
* ``datatypes``: values of a type Spark cannot combine or Delta cannot store, by Spark's error
  class
* ``streaming``: what Spark runs but what destroys, duplicates or misreads a streaming target
* ``analysis``: what ``runner lint --analyze`` asks Spark's analyzer

To add a rule: write its class in its family's module and list it below; tests/unit/fixtures/lint
needs a folder for its code (bad and good models, and the findings expected).
"""

from __future__ import annotations

from runner.lint.base import Rule, RuleInfo
from runner.lint.rules.analysis import AnalysisSkipped, SparkAnalysisError
from runner.lint.rules.analyzer import (
    MergeClauseOmitsCondition,
    OptimizeWhereNotPartition,
    UnknownFunction,
    WrongArgumentCount,
)
from runner.lint.rules.cdc import (
    MergeDependsOnBatching,
    SequenceColumnNotInStream,
    TrackHistoryColumnNotInTarget,
)
from runner.lint.rules.columns import (
    DuplicateViewColumn,
    InsertColumnCount,
    RelationQualifiedByRelation,
    UnknownColumn,
    ViewReadBeforeCreated,
)
from runner.lint.rules.datatypes import DataTypeMismatch, StoreAssignmentRefused
from runner.lint.rules.fields import StructFieldNotFound
from runner.lint.rules.grouping import ColumnNotGrouped, StarWithGroupByPosition
from runner.lint.rules.merge import (
    MergeOnMissesUniqueKey,
    MergeSourceNotDeduplicated,
    MergeWhenNotMatchedBySource,
    NonDeterministicMergeSource,
    SequenceByNotCompared,
)
from runner.lint.rules.statements import (
    BatchViewWritten,
    MissingSemicolon,
    OpaqueStatement,
    SelectStarInFinalProjection,
    SqlSyntaxError,
    SubqueryInDeltaDmlCondition,
    WholeTargetDmlPerBatch,
)
from runner.lint.rules.streaming import (
    AppendIntoKeyedTarget,
    ChangeFeedPreimageNotHandled,
    DedupeKeepsOldest,
    TargetNeverWritten,
    TargetReplacedPerBatch,
)
from runner.lint.rules.tables import (
    ChangeDataFeedNotEnabled,
    VacuumRetainBelowDefault,
    ZorderColumnInvalid,
)
from runner.lint.rules.templates import ModelDoesNotRender, UnknownReference

__all__ = ["ANALYSIS_RULES", "RULES", "all_rules", "analysis_rules"]

# The rules run on every model (their check()), by code.
RULES: tuple[type[Rule], ...] = (
    SqlSyntaxError,  # DL001
    MergeOnMissesUniqueKey,  # DL002
    MergeSourceNotDeduplicated,  # DL003
    NonDeterministicMergeSource,  # DL004
    ZorderColumnInvalid,  # DL005
    ChangeDataFeedNotEnabled,  # DL006
    UnknownReference,  # DL007
    MergeWhenNotMatchedBySource,  # DL008
    SelectStarInFinalProjection,  # DL009
    ModelDoesNotRender,  # DL010
    OpaqueStatement,  # DL011
    WholeTargetDmlPerBatch,  # DL012
    VacuumRetainBelowDefault,  # DL013
    SequenceByNotCompared,  # DL014
    MissingSemicolon,  # DL015
    SequenceColumnNotInStream,  # DL020
    TrackHistoryColumnNotInTarget,  # DL021
    MergeDependsOnBatching,  # DL022
    UnknownColumn,  # DL023
    MergeClauseOmitsCondition,  # DL024
    InsertColumnCount,  # DL025
    OptimizeWhereNotPartition,  # DL026
    ColumnNotGrouped,  # DL027
    UnknownFunction,  # DL028
    DuplicateViewColumn,  # DL029
    TargetReplacedPerBatch,  # DL030
    AppendIntoKeyedTarget,  # DL031
    DedupeKeepsOldest,  # DL032
    ChangeFeedPreimageNotHandled,  # DL033
    TargetNeverWritten,  # DL034
    DataTypeMismatch,  # DL035
    StoreAssignmentRefused,  # DL036
    ViewReadBeforeCreated,  # DL037
    WrongArgumentCount,  # DL038
    SubqueryInDeltaDmlCondition,  # DL039
    RelationQualifiedByRelation,  # DL040
    StarWithGroupByPosition,  # DL041
    StructFieldNotFound,  # DL042
    BatchViewWritten,  # DL043
)

# The rules of `runner lint --analyze`, found by Spark (runner.lint.analyze), documented last.
ANALYSIS_RULES: tuple[type[RuleInfo], ...] = (
    SparkAnalysisError,  # DL100
    AnalysisSkipped,  # DL101
)


def all_rules() -> list[type[Rule]]:
    """Every rule, ordered by code."""
    codes = [rule.code for rule in (*RULES, *ANALYSIS_RULES)]
    if len(set(codes)) != len(codes):
        raise RuntimeError(f"two lint rules share a code: {sorted(codes)}")
    return sorted(RULES, key=lambda rule: rule.code)


def analysis_rules() -> list[type[RuleInfo]]:
    """The rules of ``--analyze``. They are not ``Rule``s: Spark, not ``check()``, finds them;
    the engine applies project.yml's severity, ``disable`` and ``-- noqa`` to them alike."""
    return list(ANALYSIS_RULES)
