"""Finding a Delta commit by its transaction identity in ``_delta_log`` JSON files, without a
JVM: the files are written here as Delta writes them (one action per line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.spark.delta.delta_log import (
    commit_of,
    commits_of,
    identity_metadata,
    is_local_delta_table,
)
from runner.spark.delta.replay import committed_metrics
from runner.spark.delta.statements import Transaction


def write_commit(
    table: Path,
    version: int,
    *,
    timestamp_ms: int,
    txn: Transaction | None = None,
    operation: str = "MERGE",
    metrics: dict[str, str] | None = None,
    user_metadata: str | None = None,
) -> Path:
    """A commit file as Delta writes it: commitInfo, the txn action, then data actions."""
    info: dict = {
        "timestamp": timestamp_ms,
        "operation": operation,
        "operationMetrics": metrics or {},
    }
    if user_metadata is not None:
        info["userMetadata"] = user_metadata
    actions: list[dict] = [{"commitInfo": info}]
    if txn is not None:
        actions.append(
            {"txn": {"appId": txn.app_id, "version": txn.version, "lastUpdated": timestamp_ms}}
        )
    # a data file whose stats mention "txn": it must not be read as a txn action
    actions.append({"add": {"path": f"part-{version}.parquet", "stats": '{"txn": 1}'}})
    log = table / "_delta_log"
    log.mkdir(parents=True, exist_ok=True)
    path = log / f"{version:020d}.json"
    path.write_text("\n".join(json.dumps(a) for a in actions) + "\n")
    return path


def test_the_commit_of_a_transaction_is_found_among_others(tmp_path: Path) -> None:
    wanted = Transaction("q:m:batch[1]", 7)
    write_commit(tmp_path, 0, timestamp_ms=1_000, operation="CREATE TABLE")
    write_commit(tmp_path, 1, timestamp_ms=2_000, txn=Transaction("q:m:batch[1]", 6))
    write_commit(tmp_path, 2, timestamp_ms=3_000, txn=wanted, metrics={"scanTimeMs": "40"})
    write_commit(tmp_path, 3, timestamp_ms=4_000, txn=Transaction("q:other:batch[1]", 7))
    write_commit(tmp_path, 4, timestamp_ms=5_000, operation="OPTIMIZE")

    commit = commit_of(tmp_path, wanted, limit=10)

    assert commit is not None
    assert (commit.version, commit.timestamp_ms, commit.operation) == (2, 3_000, "MERGE")
    assert commit.metrics == {"scanTimeMs": "40"}
    assert commit_of(tmp_path, Transaction("q:m:batch[1]", 8), limit=10) is None
    assert commit_of(tmp_path, wanted, limit=2) is None  # only the newest two are read


def test_an_identity_declared_in_user_metadata_is_found_like_a_txn_action(tmp_path: Path) -> None:
    wanted = Transaction("q:m:event_log", 3)
    write_commit(tmp_path, 0, timestamp_ms=1_000, operation="WRITE")
    write_commit(tmp_path, 1, timestamp_ms=2_000, user_metadata=identity_metadata(wanted))
    write_commit(tmp_path, 2, timestamp_ms=3_000, user_metadata="nightly load by ops")
    write_commit(tmp_path, 3, timestamp_ms=4_000, user_metadata='{"note": "not an identity"}')

    commit = commit_of(tmp_path, wanted, limit=10)

    assert commit is not None and (commit.version, commit.timestamp_ms) == (1, 2_000)
    assert commit_of(tmp_path, Transaction("q:m:event_log", 4), limit=10) is None


def test_a_commit_of_several_rows_declares_each_identity(tmp_path: Path) -> None:
    """The event-log rows of several batches appended together: one commit, found by each."""
    first, second, third = (Transaction("q:m:event_log", v) for v in (3, 4, 5))
    write_commit(tmp_path, 0, timestamp_ms=1_000, user_metadata=identity_metadata(first, second))
    write_commit(tmp_path, 1, timestamp_ms=2_000, user_metadata=identity_metadata(third))

    assert json.loads(identity_metadata(third)) == {"txnAppId": "q:m:event_log", "txnVersion": 5}
    found = commits_of(tmp_path, {first, second, third}, limit=10)
    assert (found[first].version, found[second].version, found[third].version) == (0, 0, 1)
    assert found[first].transactions == {first, second}


def test_no_log_no_commit(tmp_path: Path) -> None:
    assert commit_of(tmp_path / "missing", Transaction("q:m:event_log", 0), limit=10) is None


def test_one_pass_finds_several_and_stops_at_a_commit_older_than_asked(tmp_path: Path) -> None:
    first, second, old = (Transaction("q:m:event_log", v) for v in (5, 6, 1))
    write_commit(tmp_path, 0, timestamp_ms=1_000, txn=old)
    write_commit(tmp_path, 1, timestamp_ms=10_000, txn=first)
    write_commit(tmp_path, 2, timestamp_ms=11_000, txn=second)

    found = commits_of(tmp_path, {first, second, old}, limit=10, not_before_ms=5_000)

    assert {txn: c.version for txn, c in found.items()} == {first: 1, second: 2}
    everything = commits_of(tmp_path, {first, second, old}, limit=10)
    assert everything[old].version == 0


def test_a_replay_reads_its_merge_counts_from_the_commit(tmp_path: Path) -> None:
    txn = Transaction("q:m:batch[1]", 3)
    metrics = {"numTargetRowsInserted": "2", "numTargetRowsUpdated": "1", "executionTimeMs": "9"}
    write_commit(tmp_path, 0, timestamp_ms=1_000, txn=txn, metrics=metrics)

    assert committed_metrics(tmp_path, txn) == {
        "num_inserted_rows": 2, "num_updated_rows": 1, "num_deleted_rows": 0,
    }  # fmt: skip
    assert committed_metrics(tmp_path, Transaction("q:m:batch[1]", 4)) is None


@pytest.mark.parametrize(
    ("log_files", "is_table"),
    [
        (None, False),  # no _delta_log directory
        ([], False),  # an empty log: creation never committed
        (["00000000000000000000.crc", "_last_checkpoint.tmp"], False),
        (["00000000000000000000.json"], True),
        (["00000000000000000010.checkpoint.parquet", "_last_checkpoint"], True),  # cleaned up
        (["00000000000000000010.checkpoint.0000000001.0000000002.parquet"], True),  # multi-part
        (["00000000000000000004.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json"], True),
        (["0000000000000000000.json"], False),  # 19 digits: not a log entry
    ],
)
def test_a_local_delta_table_is_a_log_with_a_commit_or_checkpoint(
    tmp_path: Path, log_files: list[str] | None, is_table: bool
) -> None:
    table = tmp_path / "t"
    table.mkdir()
    if log_files is not None:
        (table / "_delta_log").mkdir()
        for name in log_files:
            (table / "_delta_log" / name).write_text("")
    assert is_local_delta_table(table) is is_table
    assert is_local_delta_table(tmp_path / "missing") is False
