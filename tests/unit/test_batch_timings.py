"""`runner history --timings` without a JVM: each part of a batch derived from its event-log row,
the Delta logs of the event log and of the target, and the checkpoint's commit files, all
written here as Spark and Delta write them."""

from __future__ import annotations

import io
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.table import Table

from runner.cli.history_timings import timings_json, timings_table
from runner.spark.batch.timings import TimingFiles, batch_timings, median_timings
from runner.spark.delta.statements import Transaction
from tests.unit.test_delta_log import write_commit

STARTED = datetime(2026, 1, 1, 12, 0, 0)  # naive UTC, as the event log records it
PHASES = {"source": 2.0, "expectations": 0.5, "schema_drift": 0.0, "render": 0.25}
MERGE_TIMES = {"executionTimeMs": "5000", "scanTimeMs": "1200", "rewriteTimeMs": "800"}


def epoch_ms(moment: datetime) -> int:
    return int(moment.replace(tzinfo=UTC).timestamp() * 1000)


def event_log_row(
    batch_id: int, started: datetime, *, skipped: bool = False, phases: bool = True
) -> dict[str, Any]:
    """A row as `runner history` reads it (Row.asDict(recursive=True)): 10 s in all."""
    row: dict[str, Any] = {
        "model": "m",
        "batch_id": batch_id,
        "query_id": "q",
        "started_at": started,
        "seconds": 10.0,
        "statements": [
            {"label": "batch[0]", "keyword": "CREATE", "seconds": 0.25, "skipped": False},
            {"label": "batch[1]", "keyword": "MERGE", "seconds": 6.0, "skipped": skipped},
        ],
    }
    if phases:
        row["phases"] = [{"phase": name, "seconds": took} for name, took in PHASES.items()]
    return row


def commit_checkpoint(checkpoint: Path, batch_id: int, at_ms: int) -> None:
    commits = checkpoint / "commits"
    commits.mkdir(parents=True, exist_ok=True)
    path = commits / str(batch_id)
    path.write_text('v1\n{"nextBatchWatermarkMs":0}')
    os.utime(path, ns=(at_ms * 1_000_000, at_ms * 1_000_000))


@pytest.fixture
def files(tmp_path: Path) -> TimingFiles:
    """Two batches of model m under query q, each with its MERGE commit, its event-log commit
    (1.5 s and 2.5 s after the batch's end) and its checkpoint commit (0.25 s and 0.75 s after
    that). Batch 1's MERGE was skipped (a replay), yet a commit under its identity exists."""
    found = TimingFiles(tmp_path / "event_log", tmp_path / "target", tmp_path / "checkpoint")
    found.checkpoint.mkdir()
    (found.checkpoint / "metadata").write_text('{"id":"q"}')
    for batch_id, after_end, checkpoint_after in ((0, 1_500, 250), (1, 2_500, 750)):
        end_ms = epoch_ms(STARTED + timedelta(minutes=batch_id)) + 10_000
        merge = Transaction("q:m:batch[1]", batch_id)
        write_commit(found.target, batch_id, timestamp_ms=end_ms - 3_000, txn=merge,
                     metrics=MERGE_TIMES)  # fmt: skip
        log_ms = end_ms + after_end
        write_commit(found.event_log, batch_id, timestamp_ms=log_ms, operation="WRITE",
                     txn=Transaction("q:m:event_log", batch_id))  # fmt: skip
        commit_checkpoint(found.checkpoint, batch_id, log_ms + checkpoint_after)
    return found


def two_rows() -> list[dict[str, Any]]:
    return [
        event_log_row(0, STARTED),
        event_log_row(1, STARTED + timedelta(minutes=1), skipped=True),
    ]


def test_each_part_comes_from_the_row_the_delta_logs_and_the_checkpoint(files: TimingFiles):
    first, second = batch_timings(two_rows(), "m", files)

    assert first.batch_id == 0 and first.total == 10.0
    assert first.phases == PHASES
    assert first.other == 1.0  # 10 - 2.75 of phases - 6.25 of statements
    assert (first.event_log, first.checkpoint) == (1.5, 0.25)
    assert first.statements["batch[1]"].delta == {"execution": 5.0, "scan": 1.2, "rewrite": 0.8}
    assert first.statements["batch[0]"].delta == {}  # a view: no commit
    assert (second.event_log, second.checkpoint) == (2.5, 0.75)


def test_a_row_that_waited_in_its_file_is_timed_from_when_it_was_written(files: TimingFiles):
    """A stream's row is written to a file and appended later with others: the commit that
    appended it says nothing of the batch's path, its ``logged_at`` does."""
    row = event_log_row(0, STARTED)
    row["logged_at"] = STARTED + timedelta(seconds=10.125)  # 0.125 s after the batch's end
    checkpoint_ms = epoch_ms(STARTED) + 10_400
    commit_checkpoint(files.checkpoint, 0, checkpoint_ms)

    timed = batch_timings([row], "m", files)[0]

    assert (timed.event_log, timed.checkpoint) == (0.125, 0.275)  # not 1.5 from the commit

    # handed to its file within a millisecond of the batch's end, which the row's rounded
    # seconds put a little after it: 0, not -0.0
    row["logged_at"] = STARTED + timedelta(seconds=9.9996)
    assert batch_timings([row], "m", files)[0].event_log == 0.0


def test_a_skipped_statement_gets_no_delta_times(files: TimingFiles):
    """The commit under a skipped MERGE's identity is an earlier attempt's: not this one's."""
    second = batch_timings(two_rows(), "m", files)[1]
    merge = second.statements["batch[1]"]
    assert merge.skipped and merge.seconds == 6.0
    assert merge.delta == {}


def test_a_checkpoint_reset_since_the_row_gives_no_checkpoint_time(files: TimingFiles):
    """--full-refresh starts a new query on a new checkpoint: its commits/0 is another batch 0."""
    (files.checkpoint / "metadata").write_text('{"id":"newer"}')
    first = batch_timings(two_rows(), "m", files)[0]
    assert first.event_log == 1.5
    assert first.checkpoint is None


def test_an_older_row_without_logs_shows_only_what_it_recorded(tmp_path: Path):
    """A row from before the phases column, its logs not on this machine: nothing is guessed."""
    nowhere = TimingFiles(tmp_path / "a", tmp_path / "b", tmp_path / "c")
    old = batch_timings([event_log_row(4, STARTED, phases=False)], "m", nowhere)[0]
    assert old.phases == dict.fromkeys(PHASES)
    assert (old.other, old.event_log, old.checkpoint) == (None, None, None)
    assert old.statements["batch[1]"].seconds == 6.0 and old.statements["batch[1]"].delta == {}

    text = render(timings_table("m", [old], median_timings([old])))
    row = next(line for line in text.splitlines() if line.lstrip().startswith("4 "))
    assert row.split() == ["4", "10.00", *["–"] * 4, "0.25", "6.00", "–", "–", "–"]


def test_the_median_row_takes_each_part_over_the_batches_that_have_it(files: TimingFiles):
    batches = batch_timings(two_rows(), "m", files)
    median = median_timings(batches)
    assert median.batch_id is None
    assert (median.event_log, median.checkpoint) == (2.0, 0.5)
    # only batch 0's MERGE committed: its Delta times are the median's
    assert median.statements["batch[1]"].delta["scan"] == 1.2


def test_the_table_shows_the_numbers_of_the_json(files: TimingFiles):
    batches = batch_timings(two_rows(), "m", files)
    median = median_timings(batches)
    data = json.loads(timings_json("m", batches, median))
    text = render(timings_table("m", batches, median))

    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines() if line.strip()}
    assert rows["1"][6] == "skipped"  # batch 1's MERGE, replayed
    for shown in [*data["batches"], data["median"]]:
        view, merge = shown["statements"]
        expected = [shown["total"], *shown["phases"].values(), view["seconds"], merge["seconds"]]
        expected += [merge["delta"].get(name) for name in ("execution", "scan", "rewrite")]
        expected += [shown["other"], shown["event_log"], shown["checkpoint"]]
        cells = rows["median" if shown["batch_id"] is None else str(shown["batch_id"])]
        assert [c for c in cells if c != "skipped"] == [
            "–" if value is None else f"{value:.2f}" for value in expected
        ]


def render(table: Table) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=200).print(table)
    return buffer.getvalue()
