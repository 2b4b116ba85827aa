"""A killed start's temp files are removed only while the offset log is empty, and only they."""

from __future__ import annotations

from pathlib import Path

from runner.checkpoint_leftovers import remove_interrupted_first_batch

TEMP = ".0.5d1c6f0e-0a6b-4a8e-9a43-1f0c2b7d9e11.tmp"


def touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_temp_files_of_a_first_offset_write_are_removed(tmp_path: Path):
    temp = touch(tmp_path / "offsets" / TEMP, "v1\n")
    crc = touch(tmp_path / "offsets" / f".{TEMP}.crc")
    metadata = touch(tmp_path / "metadata", '{"id":"q"}')
    source_log = touch(tmp_path / "sources" / "0" / TEMP)

    assert remove_interrupted_first_batch(tmp_path) == [crc, temp]
    assert list((tmp_path / "offsets").iterdir()) == []
    assert metadata.exists() and source_log.exists()  # outside the folders Spark checks


def test_nothing_is_removed_once_the_offset_log_holds_a_batch(tmp_path: Path):
    touch(tmp_path / "offsets" / "0", "v1\n")
    temp = touch(tmp_path / "offsets" / TEMP.replace(".0.", ".1."))
    commit_temp = touch(tmp_path / "commits" / TEMP)

    assert remove_interrupted_first_batch(tmp_path) == []
    assert temp.exists() and commit_temp.exists()


def test_other_files_in_an_empty_offset_log_are_left_for_spark_to_report(tmp_path: Path):
    stray = touch(tmp_path / "offsets" / "notes.txt")
    hidden_but_not_temp = touch(tmp_path / "offsets" / ".keep")

    assert remove_interrupted_first_batch(tmp_path) == []
    assert stray.exists() and hidden_but_not_temp.exists()


def test_a_new_checkpoint_needs_nothing(tmp_path: Path):
    assert remove_interrupted_first_batch(tmp_path / "never_started") == []
