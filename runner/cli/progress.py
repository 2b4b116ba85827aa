"""Live progress for people watching a stream: one line per micro-batch (and per statement
with --verbose)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from runner.terminal import plain_console

if TYPE_CHECKING:  # the CLI must load without pyspark (lint, compile)
    from runner.spark.batch.report import BatchReport
    from runner.spark.delta.statements import StatementResult

console = plain_console(soft_wrap=True)  # log lines: never wrapped mid-line


def print_batch(report: BatchReport) -> None:
    counts = report.merge_counts
    merged = (
        f"inserted {counts.get('num_inserted_rows', 0)}, "
        f"updated {counts.get('num_updated_rows', 0)}, "
        f"deleted {counts.get('num_deleted_rows', 0)}"
        if counts
        else "no MERGE counts"
    )
    skipped = [r.statement.label for r in report.statements if r.skipped]
    extra = f" (already applied, skipped: {', '.join(skipped)})" if skipped else ""
    if any(r.recovered for r in report.statements):
        extra = extra[:-1] + "; counts recovered from the Delta log)"
    maintenance = [
        r.statement.keyword for r in report.statements if r.statement.phase == "maintenance"
    ]
    upkeep = f", {' '.join(maintenance)}" if maintenance else ""
    quarantined = f", {report.quarantined} quarantined" if report.quarantined else ""
    if report.dropped:
        quarantined += f", {report.dropped} dropped"
    if report.rescued:
        quarantined += f", {report.rescued} with rescued fields"
    failing = [f"{e.name} {e.failed} {e.action}" for e in report.expectations if e.failed]
    if failing:
        quarantined += f" (expectations failed: {', '.join(failing)})"
    console.print(
        Text.assemble(
            (report.model, "cyan"),
            f" batch {report.batch_id}: {report.input_rows} rows in"
            f"{quarantined}; {merged}{upkeep}{extra} in {report.seconds:.2f}s",
        )
    )


def print_statement(model: str, batch_id: int, result: StatementResult) -> None:
    statement = result.statement
    state = "skipped (already applied)" if result.skipped else f"{result.seconds:.2f}s"
    line = f" (line {statement.line})" if statement.line else ""  # over Connect: unknown
    console.print(
        f"  {model} batch {batch_id} {statement.label} {statement.keyword}{line}: {state}",
        style="dim",
    )
