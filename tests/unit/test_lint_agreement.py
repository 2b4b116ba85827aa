"""Acceptance 1 of #32, without a JVM: the no-JVM lint against Spark's analyzer's recorded
verdicts on the mutation corpus (bench/lint_mutations.py; the verdicts in
bench/results/lint_agreement.json, recorded by ``python -m bench.lint_agreement --record``).

Every statement Spark rejects must be reported at Spark's line, and no statement Spark accepts
may get an error from a rule that says Spark rejects what it finds. Until the whole corpus
agrees, the figures below are floors: a change to the rules may raise them, never lower them.
"""

from __future__ import annotations

from pathlib import Path

from bench.lint_agreement import ACCEPTS, REJECTS, compare, key, load_verdicts
from bench.lint_mutations import build_corpus

# Issue #32's acceptance: every corpus model has Spark's verdict (re-record after changing a
# rule's good fixture or the mutations: `.venv/bin/python -m bench.lint_agreement --record`),
# every statement Spark rejects is reported at Spark's line, and none Spark accepts gets an
# error (bench/results/lint_agreement.md lists any disagreement).
MIN_CORPUS = 1000  # statements the corpus generates


def test_the_no_jvm_lint_agrees_with_sparks_recorded_verdicts(tmp_path: Path) -> None:
    projects = build_corpus(tmp_path)
    mutants = [m for p in projects for m in p.mutants]
    verdicts = load_verdicts()
    recorded = [m for m in mutants if key(m) in verdicts]
    assert len(mutants) >= MIN_CORPUS
    assert len(recorded) == len(mutants), (
        "Spark's verdicts do not match the corpus: re-record them with "
        "`.venv/bin/python -m bench.lint_agreement --record`"
    )

    outcomes = compare(projects, verdicts)
    assert len(outcomes) >= MIN_CORPUS  # statements compared

    rejected = [o for o in outcomes if o.spark.status == REJECTS]
    false_alarms = [o for o in outcomes if o.spark.status == ACCEPTS and o.lint]
    shown = "\n".join(
        f"{o.mutant.project}/{o.mutant.name} ({o.mutant.change}): "
        f"{'; '.join(f'{v.line}: {v.code} {v.message}' for v in o.lint)}"
        for o in false_alarms[:10]
    )
    assert not false_alarms, f"errors where Spark accepts:\n{shown}"
    missed = [
        f"{o.mutant.project}/{o.mutant.name} ({o.mutant.change})" for o in rejected if not o.at_line
    ]
    assert not missed, (
        f"{len(missed)} of {len(rejected)} not reported at Spark's line: {missed[:10]}"
    )
