"""A stream's event-log rows, written to files in the batch and appended to the event log in
groups, off the batches' path.

Appending one row to the event log is a Spark job and a Delta commit: 0.17 s alone, 0.25 s
inside a stream, then the append's own end (bench/results/event-log-append.md and
upsert-goals-1.md), the largest part of the runner's own time between two MERGEs. A batch of a
stream on a classic session writes its row to a file instead (runner/event_log_files.py), before
foreachBatch returns, so before Spark commits the batch. The query's watcher appends the waiting
rows in one commit once the oldest has waited ``FLUSH_SECONDS``, and when the query ends, then
removes their files.

Nothing is lost, and ``runner history`` stays exact:

- a row is durable before Spark commits its batch. A crash before that replays the batch, which
  finds its row waiting (``is_recorded`` looks in both places) and writes no second one;
- rows a killed process left waiting are appended by the model's next start, before its query
  starts (``recover_waiting_rows``), except those the event log already holds: the kill may
  have come between an append and the removal of its files;
- ``read_history`` reads the waiting rows with the event log's;
- the appends run on a session of their own (``appending_session``), so the identity a batch's
  MERGE sets on its session meanwhile is never theirs.

Over Spark Connect a batch runs in the server's Python worker, which never sees its query end,
and the client follows the batches in the event log itself (``EventLogProgress``): there, and
for a batch run on its own (a model unit test, ``run_batch`` called directly), each row is
appended in its batch.
"""

from __future__ import annotations

import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import SparkSession

from runner import storage
from runner.error_text import first_line_with_cause
from runner.event_log_files import WaitingRow, write_waiting_row
from runner.spark.batch.eventlog import (
    EVENT_LOG_SCHEMA,
    append_rows,
    event_log_pending,
    event_log_row,
    event_log_transaction,
    is_recorded,
)
from runner.spark.batch.report import BatchReport
from runner.spark.delta.statements import TXN_APP_ID, TXN_VERSION
from runner.spark.local_frames import json_row
from runner.spark.session.isolated import sibling_session
from runner.specs.target import TargetSpec

# How long a row may wait before the watcher appends the waiting rows: with batches of two
# seconds, one append in five batches; a SQL reader of the event log sees a row within this
# (and the watcher's half-second turn).
FLUSH_SECONDS = 10.0


def appending_session(batch_session: SparkSession) -> SparkSession:
    """The session the appends run on: a sibling of the batches' session, never that one. A
    batch sets its MERGE's idempotent-write identity on its session while the MERGE runs, and
    Delta reads it from there for any write on that session, from any thread: an append made
    meanwhile would record the MERGE's identity in the event log, and the next append made under
    the same identity would be skipped as already applied, its rows lost."""
    session = sibling_session(batch_session)
    for key in (TXN_APP_ID, TXN_VERSION):  # a row is written after its batch's statements
        session.conf.unset(key)
    return session


class EventLogBuffer:
    """One model's rows waiting to be appended, from its query's batches in this process.

    ``record`` runs in the batch; ``flush_if_due`` on the query's watcher; ``flush_at_end``
    once the query has ended. The append runs outside the lock that guards the list of rows,
    so a batch that ends meanwhile hands its row over without waiting for it; a row added
    during an append waits for the next."""

    def __init__(self, target: TargetSpec, model: str) -> None:
        self.target = target
        self.model = model
        self.folder = event_log_pending(target, model)
        self._lock = threading.Lock()  # guards the fields below
        self._rows: list[tuple[float, WaitingRow]] = []  # (monotonic when added, row)
        self._session: SparkSession | None = None
        self._retry_at = 0.0  # monotonic: no append before, after a failed one
        self._appending = threading.Lock()  # one append at a time
        self.last_error: str | None = None  # the newest failed append

    def record(
        self, session: SparkSession, report: BatchReport, query_id: str, *, may_be_replay: bool
    ) -> None:
        """Write ``report``'s row to its file, at most once per (query, model, batch), with
        when it was handed to it (``logged_at``); it is appended later. ``may_be_replay``: as
        for ``record_batch``."""
        batch_id = report.batch_id
        if may_be_replay and is_recorded(session, self.target, self.model, query_id, batch_id):
            return
        logged_at = datetime.now(UTC).replace(tzinfo=None)
        row = json_row(event_log_row(report, query_id, logged_at), EVENT_LOG_SCHEMA)
        self.add(session, row, query_id, batch_id)

    def add(self, session: SparkSession, row: dict[str, Any], query_id: str, batch_id: int) -> None:
        """Write ``row`` (in ``json_row``'s form) to its file; it is appended later."""
        if self._session is None:  # once, in the first batch (the only writer of it)
            self._session = appending_session(session)
        waiting = write_waiting_row(self.folder, query_id, batch_id, row)
        with self._lock:
            self._rows.append((time.monotonic(), waiting))

    @property
    def waiting(self) -> int:
        with self._lock:
            return len(self._rows)

    def flush_if_due(self) -> None:
        """Append the waiting rows once the oldest has waited FLUSH_SECONDS. A failed append
        leaves them in their files and is tried again FLUSH_SECONDS later; the first failure is
        said on stderr. The stream goes on: no row is lost."""
        now = time.monotonic()
        with self._lock:
            due = bool(self._rows) and now - self._rows[0][0] >= FLUSH_SECONDS
        if not due or now < self._retry_at:
            return
        try:
            self.flush()
        except Exception as exc:
            self._failed(exc, "tried again every {seconds} s, and by the model's next start")

    def flush_at_end(self) -> None:
        """``flush``, once the query has ended. When the append fails, the rows stay in their
        files, which the model's next start appends: a line on stderr says so."""
        try:
            self.flush()
        except Exception as exc:
            self._failed(exc, "the model's next start appends them", always=True)

    def flush(self) -> None:
        """Append every waiting row in one commit, then remove their files."""
        with self._appending:
            with self._lock:
                rows, session = [row for _, row in self._rows], self._session
            if not rows or session is None:
                return
            transactions = [event_log_transaction(w.query_id, self.model, w.batch_id) for w in rows]
            try:
                append_rows(session, self.target, [w.row for w in rows], transactions)
            except BaseException:
                self._retry_at = time.monotonic() + FLUSH_SECONDS
                raise
            with self._lock:
                del self._rows[: len(rows)]  # rows added during the append stay
            for waiting in rows:
                storage.remove(waiting.location)

    def _failed(self, exc: Exception, then: str, *, always: bool = False) -> None:
        first = self.last_error is None
        self.last_error = first_line_with_cause(exc)
        if first or always:
            print(
                f"event log: {self.waiting} row(s) of {self.model} wait in {self.folder}, not "
                f"appended ({self.last_error}); {then.format(seconds=f'{FLUSH_SECONDS:.0f}')}",
                file=sys.stderr,
            )
