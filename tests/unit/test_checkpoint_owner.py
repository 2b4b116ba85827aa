"""The checkpoint's owner record and the comparison at a start (runner/checkpoint_owner.py),
without Spark: tests/spark/test_state_identity.py runs each case on real Delta."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.checkpoint_files import newest_offset
from runner.checkpoint_owner import (
    CorruptOwnerRecord,
    OwnerRecord,
    TargetFacts,
    batches_read,
    read_owner,
    state_mismatch,
    write_owner,
)

RECORD = OwnerRecord("a", "orders", "s.a", "/w/s/a", "id-1")


def started(checkpoint: Path) -> Path:
    """A checkpoint Spark has started a query on (its metadata file) and read 3 batches into."""
    (checkpoint / "offsets").mkdir(parents=True)
    (checkpoint / "metadata").write_text('{"id": "q"}')
    for batch in range(3):
        (checkpoint / "offsets" / str(batch)).write_text("v1\n")
    return checkpoint


def kind(checkpoint: Path, recorded: OwnerRecord | None, facts: TargetFacts) -> str | None:
    expected = OwnerRecord("a", "orders", "s.a", "/w/s/a", facts.table_id or "")
    found = state_mismatch(
        expected=expected, checkpoint=checkpoint, recorded=recorded, target=facts
    )
    return found.kind if found else None


def test_the_record_is_written_whole_and_read_back(tmp_path: Path) -> None:
    write_owner(tmp_path / "ckpt", RECORD)

    found = read_owner(tmp_path / "ckpt")

    assert found is not None and found.owner() == RECORD.owner()
    assert found.table_id == "id-1" and found.recorded_at.endswith("UTC")
    assert [p.name for p in (tmp_path / "ckpt").iterdir()] == ["runner_owner.json"]  # no temp


def test_a_record_that_does_not_parse_is_named_with_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "runner_owner.json").write_text('{"model": "a"')

    with pytest.raises(CorruptOwnerRecord) as raised:
        read_owner(tmp_path)

    assert str(tmp_path / "runner_owner.json") in raised.value.message
    assert "delete that one file" in (raised.value.hint or "")


def test_each_mismatch_is_told_apart(tmp_path: Path) -> None:
    checkpoint = started(tmp_path / "ckpt")
    live = TargetFacts("id-1", holds_data=True)

    assert kind(checkpoint, RECORD, live) is None
    assert kind(checkpoint, RECORD, TargetFacts(None, holds_data=False)) == "target_deleted"
    assert kind(checkpoint, RECORD, TargetFacts("id-2", holds_data=True)) == "target_replaced"
    other = OwnerRecord("b", "orders", "s.b", "/w/s/b", "id-1")
    assert kind(checkpoint, other, live) == "foreign_checkpoint"
    assert kind(tmp_path / "none", None, live) == "no_checkpoint"


def test_what_has_nothing_to_lose_starts(tmp_path: Path) -> None:
    # a new model; a target another model's start created empty; a checkpoint from before
    # records existed (recorded at this start)
    assert kind(tmp_path / "none", None, TargetFacts(None, holds_data=False)) is None
    assert kind(tmp_path / "none", None, TargetFacts("id-9", holds_data=False)) is None
    assert kind(started(tmp_path / "old"), None, TargetFacts("id-1", holds_data=True)) is None


def test_the_deleted_target_line_says_how_far_the_checkpoint_read(tmp_path: Path) -> None:
    checkpoint = started(tmp_path / "ckpt")
    expected = OwnerRecord("a", "orders", "s.a", "/w/s/a", "")

    found = state_mismatch(
        expected=expected,
        checkpoint=checkpoint,
        recorded=RECORD,
        target=TargetFacts(None, holds_data=False),
    )

    assert found is not None
    assert f"its checkpoint {checkpoint} has read 3 batch(es) of stream 'orders'" in found.message


def test_a_model_whose_target_changed_is_told_so_not_that_its_checkpoint_was_copied(
    tmp_path: Path,
) -> None:
    checkpoint = started(tmp_path / "ckpt")
    expected = OwnerRecord("a", "orders", "s.a_v2", "/w/s/a_v2", "id-1")

    found = state_mismatch(
        expected=expected,
        checkpoint=checkpoint,
        recorded=RECORD,
        target=TargetFacts("id-1", holds_data=True),
    )

    assert found is not None and found.kind == "foreign_checkpoint"
    assert "(its stream or target changed since the checkpoint was made)" in found.message


def test_the_newest_offset_is_the_highest_batch_number_not_the_last_name(tmp_path: Path) -> None:
    """Spark names offset-log entries by batch number, beside hidden checksums and temp files:
    batch 10 is newer than batch 9 though "10" sorts first."""
    checkpoint = tmp_path / "cp"
    assert newest_offset(checkpoint) is None and batches_read(checkpoint) == 0  # no checkpoint
    (checkpoint / "offsets").mkdir(parents=True)
    assert newest_offset(checkpoint) is None and batches_read(checkpoint) == 0
    for name in ("9", "10", ".10.crc", ".11.3f2a.tmp"):
        (checkpoint / "offsets" / name).write_text("v1\n")
    assert newest_offset(checkpoint) == 10 and batches_read(checkpoint) == 11
