"""A micro-batch as its source hands it to ``run_batch``: the rows, the source's counts, and the
one call that releases what the source cached for it.

Sources return this value instead of keeping results in module state: ``run_batch`` owns it,
reads the counts from it, and calls ``release`` in its ``finally``, so a batch's cache lives
exactly as long as the batch, whether it commits or fails.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame


@dataclass(frozen=True)
class SourceCounts:
    """What the source did with a batch before the model sees it: input rows read, rows sent to
    the quarantine, good rows with fields the stream's schema does not declare. All zero for a
    source that passes its batches through."""

    rows_read: int = 0
    rows_quarantined: int = 0
    rows_rescued: int = 0

    @property
    def rows_parsed(self) -> int:
        return self.rows_read - self.rows_quarantined


@dataclass(frozen=True)
class SourceBatch:
    """The rows the model reads (computed once: they come from a persisted frame), the
    source's counts, and ``release``, which unpersists that frame. The caller must call
    ``release`` exactly once, when the batch is done or has failed.

    ``counted``: the counts are the source's own (the file and Kafka sources count in the job
    that fills their cache), so ``rows`` holds ``counts.rows_parsed`` rows."""

    rows: DataFrame
    counts: SourceCounts
    release: Callable[[], object]
    counted: bool = False

    @property
    def row_count(self) -> int | None:
        """How many rows ``rows`` holds, when the source counted them; None when it did not."""
        return self.counts.rows_parsed if self.counted else None


def passed_through(batch_df: DataFrame) -> SourceBatch:
    """A batch the source does no work on: persisted as it is (several statements read it)."""
    batch_df.persist()
    return SourceBatch(batch_df, SourceCounts(), batch_df.unpersist)
