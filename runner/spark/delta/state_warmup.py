"""The target's Delta state for its next MERGE, computed between batches instead of inside it.

A MERGE asks Delta for the *state* of the table version it starts from: the live files, their
count and size, and the set transactions that the idempotent-write check reads. Delta computes
that state once per version, lazily, by replaying the log from its last checkpoint, and keeps it
with the version's snapshot (``Snapshot.computedState`` and ``cachedState`` in Delta 4.4). So a
batch's MERGE that writes version N leaves N's state for the next batch's MERGE to compute,
before it touches a row: the MERGE of 2,000 events took 1.80 s with it and 1.17 s without it
on 2 cores (``bench/runner_before_after.py``, ``results/before-after-state-warmup.md``).

``StateWarmer`` starts that computation as soon as a batch's statements have committed, in a
thread of its own on the batch's session, with ``DESCRIBE DETAIL`` (which reads the file count
and size, and so builds the whole state). It then runs beside the rest of the batch (the
event-log write), Spark's commit of the batch and the next batch's source. The next MERGE finds
the snapshot of the same version in Delta's log cache with its state already there, or waits for
the computation in flight instead of starting its own (the state is a lazy value: computed once).

A batch that wrote rows to the model's quarantine table (malformed input, or rows failing an
expectation) warms that table's state too, after the target's: its next write checks the same
idempotent-write identity, so it would compute the state of the version this one wrote. A
quarantine write of 10 rows took 0.70 s without it and 0.27 s after it (median of 17, one
JVM; the warm-up itself 0.46 s). That write comes early in the next batch, before its MERGE,
so ``run_batch`` waits for the warm-up in flight before it (``settle``) rather than race it.

Nothing depends on it: when the warm-up fails, or another writer has committed a newer version
meanwhile, the MERGE computes the state it needs as it always did. It only reads, so it cannot
conflict with a writer.
"""

from __future__ import annotations

import threading

from pyspark.sql import SparkSession

from runner.error_text import first_line_with_cause
from runner.storage import Location


class StateWarmer:
    """Computes tables' newest states in the background, one table at a time.

    Owned by one model's BatchExecutor: ``warm`` after a batch's statements, ``settle`` once the
    query has ended (so no Spark call outlives the session)."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self.last_error: str | None = None  # the newest warm-up failure, for diagnosis only

    def warm(self, session: SparkSession, *locations: Location) -> None:
        """Start computing the state of each of ``locations``' newest version, in their order.
        A warm-up still running from the previous batch is waited for first: two would compete
        for the same cores."""
        self.settle()
        if not locations:
            return
        self._thread = threading.Thread(
            target=self._describe,
            args=(session, [str(location) for location in locations]),
            name=f"delta-state-warmup {locations[0]}",
            daemon=True,
        )
        self._thread.start()

    def settle(self) -> None:
        """Wait for the warm-up in flight, if any."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _describe(self, session: SparkSession, locations: list[str]) -> None:
        for location in locations:
            try:
                session.sql(f"DESCRIBE DETAIL delta.`{location}`").collect()
            except Exception as exc:  # the next write computes the state itself: nothing lost
                self.last_error = first_line_with_cause(exc)
