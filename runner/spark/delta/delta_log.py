"""Commits of a Delta table, read from its ``_delta_log`` JSON files: which commit a
transaction identity made, when, and its operation metrics. An identity is Delta's own
(``txnAppId`` / ``txnVersion``, a ``txn`` action: the target's statements) or the runner's, kept
as JSON in the commit's ``userMetadata`` (the event log's appends, which skip Delta's check).

Pure Python over the files (runner/storage.py: a local disk, or object storage through the
session's Hadoop FileSystem), newest commit first (what is looked for is recent: the commit of a
batch Spark replays, the commits of the batches ``runner history --timings`` shows). No Spark
job, no DESCRIBE HISTORY. A table this process cannot reach (another machine's disk, object
storage over Spark Connect) has no commits here, and callers then report nothing rather than a
guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from runner import storage
from runner.spark.delta.statements import Transaction
from runner.storage import Location

_COMMIT_FILE = re.compile(r"[0-9]{20}\.json")
# a commit or a checkpoint (classic, multi-part or V2) of the log: a table is there
_LOG_ENTRY = re.compile(r"[0-9]{20}\.(json|checkpoint\.)")


@dataclass(frozen=True)
class Commit:
    """One commit of a Delta table: its version, the commitInfo's timestamp (milliseconds since
    the epoch: when Delta committed), its operation and operationMetrics (Delta writes their
    values as strings), and the transaction identities it recorded."""

    version: int
    timestamp_ms: int | None
    operation: str | None = None
    metrics: dict[str, str] = field(default_factory=dict)
    transactions: frozenset[Transaction] = frozenset()


def is_local_delta_table(table_location: Location) -> bool:
    """Whether a Delta table is at ``table_location``: its ``_delta_log`` holds a commit or a
    checkpoint. A directory listing, where DESCRIBE HISTORY ran a Spark job for each target at
    every start. An empty or half-made log is no table, as for Delta."""
    try:
        names = storage.names_in(table_location / "_delta_log")
    except storage.StorageUnavailable:
        return False
    return any(_LOG_ENTRY.match(name) for name in names)


def local_table_id(table_location: Location) -> str | None:
    """The Delta table id (``metaData.id``, fixed for a table's life: a table deleted and made
    again at the same place has a new one) from the table's first commit file; None when that
    file is not here (not a local table, or its log was cleaned up: ask Spark then)."""
    first = table_location / "_delta_log" / ("0" * 20 + ".json")
    try:
        lines = storage.read_text(first).splitlines()
    except (OSError, storage.StorageUnavailable):
        return None
    for line in lines:
        if '"metaData"' in line:
            found = json.loads(line).get("metaData", {}).get("id")
            return str(found) if found else None
    return None


def local_data_files(table_location: Location) -> bool:
    """Whether the table directory holds any data file (outside ``_delta_log``): a table
    that was ever written to, where CREATE TABLE alone writes none."""
    return any(
        path.name.endswith(".parquet")
        and "_delta_log" not in storage.relative_parts(path, table_location)
        for path in storage.files_under(table_location)
    )


def newest_version(table_location: Location) -> int | None:
    """The version of the table's newest commit, from the names in its ``_delta_log`` (Delta
    keeps the newest commit file through every log clean-up); None when this process does not
    reach a log with a commit there."""
    try:
        names = storage.names_in(table_location / "_delta_log")
    except (OSError, storage.StorageUnavailable):
        return None
    versions = [int(name.split(".")[0]) for name in names if _COMMIT_FILE.fullmatch(name)]
    return max(versions, default=None)


def newest_commits(table_location: Location, limit: int) -> Iterator[Commit]:
    """The newest ``limit`` commits of the table at ``table_location``, newest first; none when
    it is not a Delta table this process reaches. A commit file removed meanwhile (log
    clean-up) is passed."""
    log = table_location / "_delta_log"
    try:
        names = storage.names_in(log)
    except storage.StorageUnavailable:
        return
    for name in sorted((n for n in names if _COMMIT_FILE.fullmatch(n)), reverse=True)[:limit]:
        commit = read_commit(log / name)
        if commit is not None:
            yield commit


def read_commit(path: Location) -> Commit | None:
    """The commit in the log file ``path`` (``00000000000000000012.json``); None when the file
    is gone. Only the ``txn`` and ``commitInfo`` actions are parsed."""
    try:
        lines = storage.read_text(path).splitlines()
    except OSError:
        return None
    info: dict = {}
    transactions = set()
    for line in lines:
        if '"txn"' not in line and '"commitInfo"' not in line:
            continue  # add / remove / metaData: the bulk of a big commit
        action = json.loads(line)
        if "txn" in action:
            txn = action["txn"]
            transactions.add(Transaction(str(txn.get("appId")), int(txn.get("version", -1))))
        elif "commitInfo" in action:
            info = action["commitInfo"]
    transactions.update(declared_identities(info.get("userMetadata")))
    timestamp = info.get("timestamp")
    return Commit(
        version=int(path.name.split(".")[0]),
        timestamp_ms=int(timestamp) if timestamp is not None else None,
        operation=info.get("operation"),
        metrics=dict(info.get("operationMetrics") or {}),
        transactions=frozenset(transactions),
    )


def identity_metadata(*transactions: Transaction) -> str:
    """The ``userMetadata`` that declares ``transactions`` as a commit's identities
    (declared_identities reads them back): ``{"txnAppId": ..., "txnVersion": ...}`` for one, as
    the event log has always written it, ``{"transactions": [...]}`` of those for several (the
    event-log rows of several batches appended together)."""
    declared = [{"txnAppId": txn.app_id, "txnVersion": txn.version} for txn in transactions]
    return json.dumps(declared[0] if len(declared) == 1 else {"transactions": declared})


def declared_identities(user_metadata: object) -> list[Transaction]:
    """The identities a commit's ``userMetadata`` declares (``identity_metadata``); none for
    anything else a user may keep there."""
    if not isinstance(user_metadata, str) or not user_metadata.startswith("{"):
        return []
    try:
        found = json.loads(user_metadata)
        each = found.get("transactions", [found])
        return [Transaction(str(one["txnAppId"]), int(one["txnVersion"])) for one in each]
    except (ValueError, KeyError, TypeError):
        return []


def commit_of(table_location: Location, txn: Transaction, limit: int) -> Commit | None:
    """The commit ``txn`` made, among the newest ``limit`` commits of the table; None when it is
    not there."""
    return commits_of(table_location, {txn}, limit=limit).get(txn)


def commits_of(
    table_location: Location,
    transactions: set[Transaction],
    *,
    limit: int,
    not_before_ms: float | None = None,
) -> dict[Transaction, Commit]:
    """The commits that made ``transactions``, in one pass over the log, newest first: it stops
    when all are found, after ``limit`` commits, or at the first commit older than
    ``not_before_ms`` (the caller knows none of the transactions is). Those not found are left
    out."""
    found: dict[Transaction, Commit] = {}
    if not transactions:
        return found
    for commit in newest_commits(table_location, limit):
        stamp = commit.timestamp_ms
        if not_before_ms is not None and stamp is not None and stamp < not_before_ms:
            break
        # one commit per identity: Delta skips a second write under it
        found.update(dict.fromkeys(commit.transactions & transactions, commit))
        if len(found) == len(transactions):
            break
    return found
