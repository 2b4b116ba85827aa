"""Live, one line per micro-batch, progress for people watching a stream."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:  # a type only: importing runner.spark would import pyspark for every command
    from runner.spark.batch import BatchReport

console = Console(highlight=False)


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
    maintenance = [
        r.statement.keyword for r in report.statements if r.statement.phase == "maintenance"
    ]
    upkeep = f", {' '.join(maintenance)}" if maintenance else ""
    console.print(
        f"[cyan]{report.model}[/] batch {report.batch_id}: {merged}{upkeep}{extra} "
        f"in {report.seconds:.2f}s"
    )
