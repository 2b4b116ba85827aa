"""Differential test: the lint parser accepts exactly the statements Spark's parser accepts.

Every statement of tests/sql_corpus.py (valid statements of the kinds models contain, and
seeded mutations of them) goes through Spark's own parser with the Delta extension (parse
only, no analysis) and through ``runner.lint.agreement.lint_accepts``. The agreement figure is
printed and written to bench/results/lint_parser_agreement.md; anything short of 100 % fails.
"""

from __future__ import annotations

import collections
from pathlib import Path

from pyspark.errors import ParseException
from pyspark.sql import SparkSession

from runner.lint.agreement import lint_accepts
from tests.sql_corpus import SEED, corpus

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results" / "lint_parser_agreement.md"


def test_lint_parser_agrees_with_sparks_parser(spark: SparkSession) -> None:
    parser = spark._jsparkSession.sessionState().sqlParser()
    statements = corpus()
    assert len(statements) >= 500
    by_kind: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    disagreements = []
    for kind, sql in statements:
        try:
            parser.parsePlan(sql)
            spark_accepts = True
        except ParseException:
            spark_accepts = False
        ours = lint_accepts(sql)
        counts = by_kind[kind]
        counts[0] += 1
        counts[1] += spark_accepts
        counts[2] += ours == spark_accepts
        if ours != spark_accepts:
            disagreements.append((kind, spark_accepts, sql))
    agreed = len(statements) - len(disagreements)
    percent = 100.0 * agreed / len(statements)
    rows = "\n".join(
        f"| {kind} | {n} | {accepted} | {n - accepted} | {same} |"
        for kind, (n, accepted, same) in sorted(by_kind.items())
    )
    report = (
        "# Lint parser vs Spark's parser\n\n"
        "Produced by `pytest tests/spark/test_lint_agreement.py` (corpus: tests/sql_corpus.py, "
        f"seed {SEED}). Spark's parser: `sessionState().sqlParser().parsePlan` with the Delta "
        "extension, parse only. Lint parser: `runner.lint.agreement.lint_accepts` (the Delta "
        "sqlglot dialect; an opaque command counts as rejected).\n\n"
        f"**{agreed} of {len(statements)} statements agree ({percent:.1f} %).**\n\n"
        "| kind | statements | Spark accepts | Spark rejects | lint agrees |\n"
        "| --- | --- | --- | --- | --- |\n"
        f"{rows}\n\n"
        "Spark accepts some mutations: `DESCRIBE HISTOR t` describes column `t` of table "
        "`HISTOR`, and Delta keeps everything after `OPTIMIZE t WHERE` as raw predicate text "
        "(parsed only when the command runs), so the lint parser accepts those too.\n"
    )
    RESULTS.write_text(report)
    print(f"\nlint/Spark parser agreement: {agreed}/{len(statements)} ({percent:.1f} %)")
    shown = "\n\n".join(f"[{k}] Spark accepts={s}:\n{sql}" for k, s, sql in disagreements[:10])
    assert not disagreements, f"{len(disagreements)} disagreements, e.g.:\n{shown}"
