"""The no-JVM lint against Spark's analyzer on the mutation corpus (bench/lint_mutations.py).

    .venv/bin/python -m bench.lint_agreement [--record]

With ``--record``, every corpus model goes through Spark's analyzer (``runner lint
--analyze``'s machinery, one JVM for the whole corpus) and Spark's verdicts are written to
bench/results/lint_agreement.json, keyed by each model's text; tests/unit/test_lint_agreement.py
then compares the no-JVM lint with them without a JVM. Either way the comparison is written to
bench/results/lint_agreement.md, every disagreement listed.

A statement Spark rejects is *caught* when the no-JVM lint reports an error in that model, and
caught *at the line* when one is on Spark's line (any rule's: a streaming rule's error there,
as DL013's on ``VACUUM RETAIN 0 HOURS``, reports the statement too). A statement Spark accepts
is a *false alarm* when
the no-JVM lint reports such an error in it. The streaming rules (what Spark runs but what
damages the target: ``spark_rejects = False``) may report errors on statements Spark accepts:
that is their purpose, and they are counted apart.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from bench.lint_mutations import SEED, CorpusProject, Mutant, build_corpus
from runner.lint.analyze import EXPLAIN_OR_RUN, ModelPlan, PlannedStatement
from runner.lint.base import ERROR, Violation
from runner.lint.context import ModelContext
from runner.lint.engine import build_context, lint_loaded
from runner.lint.expressions import temp_views
from runner.lint.relations import declared_tables
from runner.lint.rules import all_rules
from runner.project import Project, load
from runner.sql.dialect import Optimize, Vacuum

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

REPO = Path(__file__).resolve().parents[1]
VERDICTS = REPO / "bench" / "results" / "lint_agreement.json"
REPORT = REPO / "bench" / "results" / "lint_agreement.md"
ACCEPTS, REJECTS, SKIPPED = "accepts", "rejects", "skipped"


@dataclass(frozen=True)
class Verdict:
    """Spark's verdict on one corpus model."""

    status: str  # accepts | rejects | skipped (not analyzable: no static schema)
    line: int | None = None
    error_class: str = ""
    message: str = ""


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    spark: Verdict
    lint: tuple[Violation, ...]  # the errors of rules that claim Spark rejects
    streaming: tuple[Violation, ...]  # the errors of the other rules
    # the model lines of the statement Spark names as a whole (its position is the statement's
    # first line, as for a MERGE whose clauses Spark's parser refuses), else None
    statement: tuple[int, int] | None = None
    warnings: tuple[Violation, ...] = ()  # the lint's warnings in the model

    @property
    def caught(self) -> bool:
        return bool(self.lint or self.streaming)

    @property
    def at_line(self) -> bool:
        """A lint error on Spark's line or, where Spark names the whole statement, in it."""
        errors = self.lint + self.streaming
        if any(v.line == self.spark.line for v in errors):
            return True
        if self.statement is None:
            return False
        first, last = self.statement
        return any(first <= v.line <= last for v in errors)

    @property
    def agrees(self) -> bool:
        if self.spark.status == REJECTS:
            return self.at_line
        return not self.lint


def key(mutant: Mutant) -> str:
    digest = hashlib.sha1(mutant.source.encode()).hexdigest()[:12]
    return f"{mutant.project}/{mutant.name}/{digest}"


def spark_rejecting_codes() -> frozenset[str]:
    return frozenset(rule.code for rule in all_rules() if rule.spark_rejects)


# -- Spark's side ---------------------------------------------------------------------------


def record_verdicts(projects: list[CorpusProject], verdicts: dict[str, Verdict]) -> None:
    """Every corpus model not in ``verdicts`` through Spark's analyzer, in one local Spark
    application; ``verdicts`` (without the models the corpus no longer has) is saved after
    each project, so a stopped run resumes."""
    from runner.lint.analyze import plan_analysis
    from runner.spark.analyze import analysis_session

    current = {key(m) for corpus in projects for m in corpus.mutants}
    for stale in set(verdicts) - current:  # a model the corpus no longer has
        del verdicts[stale]
    scratch = Path(tempfile.mkdtemp(prefix="lint-agreement-"))
    spark = None
    try:
        for corpus in projects:
            if all(key(m) in verdicts for m in corpus.mutants):
                continue
            started = time.monotonic()
            project = load(corpus.root, tolerate_model_errors=True)
            spark = spark or analysis_session(project, scratch)
            contexts = [build_context(project, m.file) for m in project.models.values()]
            plans = {p.model.name: p for p in map(plan_analysis, contexts) if p is not None}
            found = _analyze_bases_first(project, corpus, contexts, plans, spark)
            for mutant in corpus.mutants:
                if mutant.name not in plans:  # does not load or render: nothing to analyze
                    verdicts[key(mutant)] = Verdict(SKIPPED, None, "", "not rendered")
                else:
                    verdicts[key(mutant)] = _verdict(found.get(mutant.name, []))
            save_verdicts(verdicts)
            took = time.monotonic() - started
            print(f"{corpus.name}: {len(corpus.mutants)} models in {took:.0f} s", flush=True)
    finally:
        if spark is not None:
            spark.stop()
        shutil.rmtree(scratch, ignore_errors=True)


def _analyze_bases_first(
    project: Project,
    corpus: CorpusProject,
    contexts: list[ModelContext],
    plans: dict[str, ModelPlan],
    spark: SparkSession,
) -> dict[str, list[Violation]]:
    """Spark's findings by model name: the base models first, then their mutants without the
    OPTIMIZE and VACUUM statements a base already ran without error on the same empty
    stand-in (the maintenance statements every mutant of a base shares, which Spark executes
    rather than EXPLAINs: the same statement on the same empty table gets the same verdict,
    and executing VACUUM is most of the recording's time)."""
    bases = {m.name for m in corpus.mutants if m.kind == "valid"}
    found = _spark_violations(project, contexts, _only(plans, bases), spark)
    passed = {
        planned.sql
        for name, plan in plans.items()
        if name in bases and name not in found
        for planned in plan.statements
        if _executed(planned)
    }
    rest = {
        name: replace(
            plan,
            statements=tuple(p for p in plan.statements if not (_executed(p) and p.sql in passed)),
        )
        for name, plan in plans.items()
        if name not in bases
    }
    found.update(_spark_violations(project, contexts, rest, spark))
    return found


def _only(plans: dict[str, ModelPlan], names: set[str]) -> dict[str, ModelPlan]:
    return {name: plan for name, plan in plans.items() if name in names}


def _executed(planned: PlannedStatement) -> bool:
    """An OPTIMIZE or VACUUM of a stand-in, which Spark executes (it cannot EXPLAIN them)."""
    expression = planned.parsed.expression
    return planned.mode == EXPLAIN_OR_RUN and isinstance(expression, (Optimize, Vacuum))


def _spark_violations(
    project: Project,
    contexts: list[ModelContext],
    plans: dict[str, ModelPlan],
    spark: SparkSession,
) -> dict[str, list[Violation]]:
    """Spark's findings by model name. ``runner lint --analyze`` does not repeat a syntax
    error the no-JVM parser reported (DL001); here Spark's own parser judges such statements,
    since its verdict is what the lint is measured against."""
    from runner.lint.analyze import AnalysisFinding, analysis_violations
    from runner.spark.analyze import analyze_project

    findings = analyze_project(project, list(plans.values()), spark)
    judged = {f.model.name for f in findings}
    for name, plan in plans.items():
        if name in judged:
            continue
        for planned in plan.statements:
            if planned.parsed.error is None:
                continue
            text = _spark_parse_error(spark, planned.sql)
            if text is None:
                continue
            position = re.search(r"line (\d+),? pos (\d+)", text)
            line, col = (int(position[1]), int(position[2]) + 1) if position else (None, None)
            message = f"Spark rejects {planned.parsed.statement.label}: {' '.join(text.split())}"
            findings.append(AnalysisFinding(plan.model, planned, message, line=line, col=col))
            break
    found = analysis_violations(contexts, findings)
    return {file.stem: violations for file, violations in found.items()}


def _spark_parse_error(spark: SparkSession, sql: str) -> str | None:
    """Spark's parser's (with Delta's extension) error for ``sql``, None when it parses."""
    try:
        spark._jsparkSession.sessionState().sqlParser().parsePlan(sql)
    except Exception as exc:  # noqa: BLE001 - the parser's message is the verdict
        return str(exc).split("\n== SQL")[0]
    return None


def _verdict(violations: list[Violation]) -> Verdict:
    if not violations:
        return Verdict(ACCEPTS)
    first = min(violations, key=lambda v: (v.code != "DL100", v.line))
    if first.code != "DL100":
        return Verdict(SKIPPED, first.line, "", first.message)
    return Verdict(REJECTS, first.line, error_class(first.message), first.message)


def error_class(message: str) -> str:
    """Spark's error class in its message (``[UNRESOLVED_COLUMN.WITH_SUGGESTION]``), or the
    Delta exception's name when it gives none."""
    match = re.search(r"\[([A-Z][A-Z0-9_.]+)\]", message)
    if match:
        return match.group(1)
    match = re.search(r"(\w+(?:Exception|Error))", message)
    return match.group(1) if match else "(no class)"


def save_verdicts(verdicts: dict[str, Verdict]) -> None:
    rows = {k: [v.status, v.line, v.error_class, v.message] for k, v in sorted(verdicts.items())}
    VERDICTS.write_text(json.dumps({"seed": SEED, "verdicts": rows}, indent=0) + "\n")


def load_verdicts() -> dict[str, Verdict]:
    if not VERDICTS.exists():
        return {}
    rows = json.loads(VERDICTS.read_text())["verdicts"]
    return {k: Verdict(*row) for k, row in rows.items()}


# -- the comparison -------------------------------------------------------------------------


def compare(projects: list[CorpusProject], verdicts: dict[str, Verdict]) -> list[Outcome]:
    """Each corpus model's Spark verdict next to the no-JVM lint's errors in it. The mutants
    of a base Spark rejects, and models Spark could not analyze, are left out."""
    rejecting = spark_rejecting_codes()
    outcomes = []
    for corpus in projects:
        if not all(key(m) in verdicts for m in corpus.mutants):
            continue  # not recorded yet
        project = load(corpus.root, tolerate_model_errors=True)
        findings = _findings_by_model(project)
        bad_bases = {  # a table absent from the sandbox is judged mutant by mutant
            m.base
            for m in corpus.mutants
            if m.kind == "valid"
            and verdicts[key(m)].status != ACCEPTS
            and not _table_not_in_sandbox(project, m, verdicts[key(m)])
        }
        for mutant in corpus.mutants:
            verdict = verdicts[key(mutant)]
            # a base Spark rejects is compared like any statement; its mutants, which
            # inherit its defect, are not
            if (mutant.base in bad_bases and mutant.kind != "valid") or verdict.status == SKIPPED:
                continue
            if _table_not_in_sandbox(project, mutant, verdict):
                continue
            mine = [v for v in findings.get(mutant.name, []) if v.severity == ERROR]
            warned = tuple(v for v in findings.get(mutant.name, []) if v.severity != ERROR)
            outcomes.append(
                Outcome(
                    mutant,
                    verdict,
                    tuple(v for v in mine if v.code in rejecting),
                    tuple(v for v in mine if v.code not in rejecting),
                    _statement_at(project, mutant, verdict.line)
                    if verdict.status == REJECTS
                    else None,
                    warned,
                )
            )
    return outcomes


_NOT_FOUND = re.compile(r"The table or view ((?:`[^`]+`\.)+`[^`]+`) cannot be found")


def _table_not_in_sandbox(project: Project, mutant: Mutant, verdict: Verdict) -> bool:
    """Spark found no table of a database-qualified name the project does not declare: the
    analysis's empty catalog holds only the project's own tables (a model may read others, and
    the lint leaves them alone). A name qualified by a table's or a view's name is not one."""
    found = _NOT_FOUND.search(verdict.message) if verdict.status == REJECTS else None
    model = project.models.get(mutant.name)
    if found is None or model is None:
        return False
    parts = [part.strip("`").lower() for part in found.group(1).split("`.`")]
    relations = set(declared_tables(project))
    relations |= {m.batch_view.lower() for m in project.models.values()}
    for statements in build_context(project, model.file).batches.values():
        relations |= set(temp_views(statements))
    return ".".join(parts) not in relations and ".".join(parts[:-1]) not in relations


def _statement_at(project: Project, mutant: Mutant, line: int | None) -> tuple[int, int] | None:
    """The first and last model line of the statement whose keyword is on ``line`` (where
    Spark places an error it gives no position for, as Delta's MERGE errors), if one is."""
    model = project.models.get(mutant.name)
    if model is None or line is None:
        return None
    for parsed in build_context(project, model.file).statements():
        statement = parsed.statement
        if statement.line_map and line in (statement.line, statement.source_line_at(1)):
            return line, statement.source_line_at(parsed.sql.count("\n") + 1)
    return None


def _findings_by_model(project: Project) -> dict[str, list[Violation]]:
    found: dict[str, list[Violation]] = defaultdict(list)
    for violation in lint_loaded(project).violations:
        found[Path(violation.path).stem].append(violation)
    return found


def report(outcomes: list[Outcome], excluded: int, unrecorded: int) -> str:
    rejected = [o for o in outcomes if o.spark.status == REJECTS]
    accepted = [o for o in outcomes if o.spark.status == ACCEPTS]
    caught = sum(o.caught for o in rejected)
    at_line = sum(o.at_line for o in rejected)
    false_alarms = [o for o in accepted if o.lint]
    agreed = sum(o.agrees for o in outcomes)
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    for o in outcomes:
        counts = kinds[o.mutant.kind]
        counts["n"] += 1
        counts["rejects"] += o.spark.status == REJECTS
        counts["caught"] += o.spark.status == REJECTS and o.at_line
        counts["false"] += o.spark.status == ACCEPTS and bool(o.lint)
        counts["agree"] += o.agrees
    rows = "\n".join(
        f"| {kind} | {c['n']} | {c['rejects']} | {c['caught']} | {c['n'] - c['rejects']} "
        f"| {c['false']} | {c['agree']} |"
        for kind, c in sorted(kinds.items())
    )
    classes = Counter(o.spark.error_class for o in rejected)
    missed_classes = Counter(o.spark.error_class for o in rejected if not o.at_line)
    class_rows = "\n".join(
        f"| `{name}` | {n} | {n - missed_classes[name]} |" for name, n in classes.most_common()
    )
    streaming = Counter(v.code for o in accepted for v in o.streaming)
    warnings = Counter(v.code for o in accepted for v in o.warnings)
    recorded = len(outcomes) + excluded
    percent = 100.0 * agreed / len(outcomes) if outcomes else 0.0
    text = f"""# The no-JVM lint vs Spark's analyzer

Produced by `.venv/bin/python -m bench.lint_agreement --record` (the corpus:
bench/lint_mutations.py, seed {SEED}; Spark's verdicts: bench/results/lint_agreement.json),
enforced by tests/unit/test_lint_agreement.py. Spark's analyzer: `runner lint --analyze`'s
machinery (runner/spark/analyze.py), every corpus model in one local JVM, against empty
stand-ins of the targets and batch views. The no-JVM lint: `runner lint`'s rules.

A statement Spark rejects agrees when the no-JVM lint reports an error at Spark's line (or,
where Spark names the whole statement, in it); a statement Spark accepts agrees when the no-JVM
lint reports no error from a rule that says Spark rejects what it finds. The streaming rules
report what Spark accepts but what damages a streaming target; their errors on statements Spark
accepts are allowed (documented in docs/compile-and-lint.md) and counted below.

**{agreed} of {len(outcomes)} statements agree ({percent:.1f} %).** Models with Spark's verdict
recorded: {recorded} of {recorded + unrecorded}.

- Spark rejects {len(rejected)}: the no-JVM lint reports {caught} of them, {at_line} at Spark's
  line.
- Spark accepts {len(accepted)}: the no-JVM lint reports an error in {len(false_alarms)}.
- Left out: {excluded} models that are mutants of a base Spark rejects (the base itself is
  compared) or that Spark could not analyze (a stream without a static schema, a table the
  project does not declare), and {unrecorded} models whose Spark verdict is not recorded yet.
- Streaming rules' errors on statements Spark accepts: {_counts(streaming)}.
- Warnings on statements Spark accepts: {_counts(warnings)}.

| mutation | statements | Spark rejects | lint at Spark's line | Spark accepts | \
lint error where Spark accepts | agree |
| --- | --- | --- | --- | --- | --- | --- |
{rows}

| Spark's error class | statements | lint at Spark's line |
| --- | --- | --- |
{class_rows}

## Disagreements

"""
    for o in outcomes:
        if o.agrees:
            continue
        m = o.mutant
        lint = "; ".join(f"{v.line}: {v.code} {v.message}" for v in o.lint) or "nothing"
        spark = (
            f"rejects at line {o.spark.line}: `{o.spark.error_class}` {o.spark.message}"
            if o.spark.status == REJECTS
            else "accepts"
        )
        text += (
            f"- `{m.project}/models/{m.name}.sql` ({m.kind}: {m.change})\n"
            f"  - Spark: {_one_line(spark)}\n  - lint: {_one_line(lint)}\n"
        )
    return text


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{code} {n}" for code, n in sorted(counter.items())) or "none"


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) < 400 else text[:397] + "..."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--record", action="store_true", help="ask Spark's analyzer again (starts a JVM)"
    )
    parser.add_argument("--out", type=Path, help="where to write the corpus (default: a temp dir)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="lint-corpus-"))
    projects = build_corpus(out)
    verdicts = load_verdicts()
    if args.record:
        record_verdicts(projects, verdicts)
    outcomes = compare(projects, verdicts)
    total = sum(len(p.mutants) for p in projects)
    unrecorded = sum(1 for p in projects for m in p.mutants if key(m) not in verdicts)
    REPORT.write_text(report(outcomes, total - len(outcomes) - unrecorded, unrecorded))
    agreed = sum(o.agrees for o in outcomes)
    print(f"{agreed} of {len(outcomes)} agree; {REPORT.relative_to(REPO)} written")
    if not args.out:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
