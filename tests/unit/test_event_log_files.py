"""The files a stream's event-log rows wait in before they are appended together, without a
JVM (runner/event_log_files.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.event_log_files import (
    DamagedRowFile,
    is_waiting,
    pending_folder,
    row_file,
    waiting_rows,
    write_waiting_row,
)

QUERY = "0b6d1f4e-6a53-4f57-9d2e-2c4f3a9e1c77"


def test_the_rows_wait_beside_the_event_log_never_inside_it(tmp_path: Path) -> None:
    event_log = tmp_path / "warehouse" / "_runner" / "event_log"
    folder = pending_folder(event_log, "orders_merge")
    assert folder == tmp_path / "warehouse" / "_runner" / "event_log_pending" / "orders_merge"
    assert event_log not in folder.parents


def test_a_written_row_is_read_back_by_query_and_batch(tmp_path: Path) -> None:
    write_waiting_row(tmp_path, QUERY, 10, {"batch_id": 10, "seconds": 1.5})
    write_waiting_row(tmp_path, QUERY, 9, {"batch_id": 9, "seconds": 0.5})
    write_waiting_row(tmp_path, "another-query", 0, {"batch_id": 0})

    found = waiting_rows(tmp_path)

    assert [(w.query_id, w.batch_id) for w in found] == [
        (QUERY, 9),  # by number, not by name: 9 before 10
        (QUERY, 10),
        ("another-query", 0),
    ]
    assert found[1].row == {"batch_id": 10, "seconds": 1.5}
    assert found[1].location == row_file(tmp_path, QUERY, 10)
    assert is_waiting(tmp_path, QUERY, 9)
    assert not is_waiting(tmp_path, QUERY, 11)


def test_a_replayed_batch_writes_its_one_file_again(tmp_path: Path) -> None:
    write_waiting_row(tmp_path, QUERY, 3, {"batch_id": 3, "seconds": 9.0})
    write_waiting_row(tmp_path, QUERY, 3, {"batch_id": 3, "seconds": 1.0})
    assert [w.row["seconds"] for w in waiting_rows(tmp_path)] == [1.0]


def test_a_damaged_file_is_named(tmp_path: Path) -> None:
    (tmp_path / f"{QUERY}.7.json").write_text('{"batch_id": 7, "sec')
    with pytest.raises(DamagedRowFile, match=f"{QUERY}.7.json is not JSON"):
        waiting_rows(tmp_path)


def test_other_files_and_a_missing_folder_are_no_rows(tmp_path: Path) -> None:
    assert waiting_rows(tmp_path / "never-written") == []
    (tmp_path / f".{QUERY}.4.json.abc.tmp").write_text("{")  # a write in progress
    (tmp_path / "notes.txt").write_text("kept by someone")
    assert waiting_rows(tmp_path) == []


def test_a_file_removed_after_the_listing_is_left_out(tmp_path: Path) -> None:
    """The stream appended the row and removed its file while `runner history` listed them."""
    write_waiting_row(tmp_path, QUERY, 1, {"batch_id": 1})
    (tmp_path / f"{QUERY}.2.json").symlink_to(tmp_path / "gone")  # listed, unreadable
    assert [w.batch_id for w in waiting_rows(tmp_path)] == [1]
