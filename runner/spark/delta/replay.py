"""What a skipped statement did the first time: its counts, read back from the Delta log.

When Spark replays a batch after a crash, Delta skips a MERGE whose (txnAppId, txnVersion) it
already committed, and the skipped MERGE returns no counts. The commit that applied it is in
the table's ``_delta_log``: a commit holding a ``txn`` action with that app id and version and a
``commitInfo`` with ``operationMetrics`` (``delta_log.py`` finds it). Reading it lets the batch's
event-log row report what really happened, marked as recovered, instead of "skipped, 0 rows".

Only the newest ``SCAN_LIMIT`` commits are read: a replay is always of one of the latest batches.
"""

from __future__ import annotations

from runner.spark.delta.delta_log import commit_of
from runner.spark.delta.statements import Transaction
from runner.storage import Location

SCAN_LIMIT = 200
# operationMetrics of a MERGE commit -> the names of the MERGE statement's own result columns
_METRICS = {
    "numTargetRowsInserted": "num_inserted_rows",
    "numTargetRowsUpdated": "num_updated_rows",
    "numTargetRowsDeleted": "num_deleted_rows",
}


def committed_metrics(table_location: Location, txn: Transaction) -> dict[str, int] | None:
    """The MERGE counts of the commit of ``table_location`` made under ``txn``, or None when no
    such commit is among the newest SCAN_LIMIT (or the table is not a local Delta table)."""
    commit = commit_of(table_location, txn, limit=SCAN_LIMIT)
    if commit is None:
        return None
    return {ours: int(commit.metrics.get(theirs, 0)) for theirs, ours in _METRICS.items()}
