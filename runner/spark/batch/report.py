"""What one micro-batch did: the ``BatchReport`` that ``run_batch`` returns.

In a module of its own because several need it and none should import another for it:
``run.py`` fills it in, ``eventlog.py`` records it, ``streaming/remote_batches.py`` rebuilds it
from the event log, and progress output shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from runner.spark.batch.expectations import ExpectationOutcome
from runner.spark.delta.statements import StatementResult

# The phases run_batch times before the statements, in the order they are shown. They run in
# the order source, schema_drift, expectations, render, except that the source's quarantine
# write runs after schema_drift (which may stop the batch first) and is timed as source.
BATCH_PHASES = ("source", "expectations", "schema_drift", "render")


@dataclass
class BatchReport:
    """What one micro-batch did, for progress output and metrics."""

    model: str
    batch_id: int
    started_at: datetime | None = None
    seconds: float = 0.0
    input_rows: int = 0
    quarantined: int = 0  # rows: malformed input, and rows failing a 'quarantine' expectation
    dropped: int = 0  # rows failing a 'drop' expectation (and no 'quarantine' one)
    rescued: int = 0  # good rows with fields the stream's schema does not declare
    expectations: list[ExpectationOutcome] = field(default_factory=list)
    statements: list[StatementResult] = field(default_factory=list)
    # seconds of each of BATCH_PHASES (see run_batch); the statements time themselves
    phases: dict[str, float] = field(default_factory=dict)

    @property
    def merge_counts(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for result in self.statements:
            for key, value in result.metrics.items():
                totals[key] = totals.get(key, 0) + value
        return totals
