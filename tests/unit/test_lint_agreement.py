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

# Floors (see bench/results/lint_agreement.md for the statements behind them). Not yet every
# statement: 772 of the corpus's models have Spark's verdict (recording takes ~5 s a model on an
# idle 2-core machine, 30-45 s on a loaded one); on those, 2 rejections are not caught (listed in
# the report) and no statement Spark accepts gets an error.
MIN_CORPUS = 1000  # statements the corpus generates
MIN_RECORDED = 2041  # of them with Spark's verdict recorded
MIN_CAUGHT_AT_LINE = 901  # statements Spark rejects that lint reports at Spark's line
MAX_FALSE_ALARMS = 0  # statements Spark accepts that lint reports an error in


def test_the_no_jvm_lint_agrees_with_sparks_recorded_verdicts(tmp_path: Path) -> None:
    projects = build_corpus(tmp_path)
    mutants = [m for p in projects for m in p.mutants]
    verdicts = load_verdicts()
    recorded = [m for m in mutants if key(m) in verdicts]
    assert len(mutants) >= MIN_CORPUS
    assert len(recorded) >= MIN_RECORDED, (
        "Spark's verdicts do not match the corpus: re-record them with "
        "`.venv/bin/python -m bench.lint_agreement --record`"
    )

    outcomes = compare(projects, verdicts)

    rejected = [o for o in outcomes if o.spark.status == REJECTS]
    caught = [o for o in rejected if o.at_line]
    false_alarms = [o for o in outcomes if o.spark.status == ACCEPTS and o.lint]
    shown = "\n".join(
        f"{o.mutant.project}/{o.mutant.name} ({o.mutant.change}): "
        f"{'; '.join(f'{v.line}: {v.code} {v.message}' for v in o.lint)}"
        for o in false_alarms[:10]
    )
    assert len(false_alarms) <= MAX_FALSE_ALARMS, f"errors where Spark accepts:\n{shown}"
    assert len(caught) >= MIN_CAUGHT_AT_LINE, f"{len(caught)} of {len(rejected)} caught"
