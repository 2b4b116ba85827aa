"""Over Spark Connect the client rebuilds each batch's report from its event-log row (no JVM
needed to test that: pyspark's Row is plain Python)."""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import Row

from runner.spark.streaming.remote_batches import report_from_row

MERGE = Row(label="batch[1]", keyword="MERGE", seconds=4.2, skipped=False, inserted=3,
            updated=1, deleted=None)  # fmt: skip


def event_log_row(**extra: object) -> Row:
    return Row(model="m", batch_id=2, started_at=datetime(2026, 1, 1), seconds=9.5, input_rows=5,
               quarantined=None, statements=[MERGE], **extra)  # fmt: skip


def test_the_report_keeps_the_phases_and_the_statements() -> None:
    phases = [Row(phase="source", seconds=1.5), Row(phase="render", seconds=0.25)]
    report = report_from_row(event_log_row(phases=phases))
    assert report.phases == {"source": 1.5, "render": 0.25}
    assert [(r.statement.label, r.seconds) for r in report.statements] == [("batch[1]", 4.2)]
    assert report.merge_counts == {"num_inserted_rows": 3, "num_updated_rows": 1}


def test_a_row_from_before_the_phases_column_has_none() -> None:
    assert report_from_row(event_log_row()).phases == {}
