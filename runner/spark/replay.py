"""What a skipped statement did the first time: its counts, read back from the Delta log.

When Spark replays a batch after a crash, Delta skips a MERGE whose (txnAppId, txnVersion) it
already committed, and the skipped MERGE returns no counts. The commit that applied it is in
the table's ``_delta_log``: a JSON file holding a ``txn`` action with that app id and version
and a ``commitInfo`` with ``operationMetrics``. Reading it lets the batch's event-log row report
what really happened, marked as recovered, instead of "skipped, 0 rows".

Pure Python over the local log files (the newest ``SCAN_LIMIT`` commits; a replay is always of
one of the latest batches).
"""

from __future__ import annotations

import json
from pathlib import Path

from runner.spark.statements import Transaction

SCAN_LIMIT = 200
# operationMetrics of a MERGE commit -> the names of the MERGE statement's own result columns
_METRICS = {
    "numTargetRowsInserted": "num_inserted_rows",
    "numTargetRowsUpdated": "num_updated_rows",
    "numTargetRowsDeleted": "num_deleted_rows",
}


def committed_metrics(table_location: Path, txn: Transaction) -> dict[str, int] | None:
    """The MERGE counts of the commit of ``table_location`` made under ``txn``, or None when no
    such commit is among the newest SCAN_LIMIT (or the table is not a local Delta table)."""
    log = table_location / "_delta_log"
    if not log.is_dir():
        return None
    commits = sorted(log.glob("[0-9]" * 20 + ".json"), reverse=True)[:SCAN_LIMIT]
    for commit in commits:
        found = _commit_of(commit, txn)
        if found is not None:
            return found
    return None


def _commit_of(commit: Path, txn: Transaction) -> dict[str, int] | None:
    matched, metrics = False, None
    try:
        lines = commit.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        if '"txn"' not in line and '"commitInfo"' not in line:
            continue
        action = json.loads(line)
        if "txn" in action:
            app = action["txn"]
            matched = app.get("appId") == txn.app_id and app.get("version") == txn.version
        elif "commitInfo" in action:
            metrics = action["commitInfo"].get("operationMetrics") or {}
    if not matched:
        return None
    return {ours: int((metrics or {}).get(theirs, 0)) for theirs, ours in _METRICS.items()}
