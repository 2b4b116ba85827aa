"""runner/storage.py without a JVM: locations as project.yml gives them, the local filesystem
side, and what a location on object storage says when no session reaches it."""

from __future__ import annotations

from pathlib import Path, PurePath

import pytest

from runner import storage
from runner.storage import RemotePath, StorageUnavailable, parse_location


def test_a_uri_is_on_object_storage_and_a_relative_path_is_under_the_project(
    tmp_path: Path,
) -> None:
    assert parse_location("s3a://lake/wh/", tmp_path) == RemotePath("s3a://lake/wh")
    assert parse_location("target/wh", tmp_path) == tmp_path / "target" / "wh"
    assert parse_location("file:///data/wh", tmp_path) == Path("/data/wh")


def test_a_remote_path_joins_and_splits_as_a_path_does() -> None:
    root = RemotePath("s3a://lake/checkpoints")
    entry = root / "orders" / PurePath("sources/0")
    assert str(entry) == "s3a://lake/checkpoints/orders/sources/0"
    assert entry.name == "0" and entry.parent.name == "sources"
    assert root.scheme == "s3a" and storage.scheme_of(Path("/x")) is None
    assert storage.relative_parts(entry, root) == ("orders", "sources", "0")


def test_local_files_are_written_whole_listed_and_removed(tmp_path: Path) -> None:
    record = tmp_path / "cp" / "orders" / "runner_owner.json"
    storage.write_text(record, '{"a": 1}')
    storage.write_text(record, '{"a": 2}')
    assert storage.read_text(record) == '{"a": 2}'
    assert storage.names_in(record.parent) == ["runner_owner.json"]  # no temp file left
    assert storage.is_file(record) and storage.is_dir(record.parent)
    assert storage.modified_ms(record) is not None
    assert storage.names_in(tmp_path / "missing") == []
    assert storage.remove(tmp_path / "cp") and not storage.remove(tmp_path / "cp")
    with pytest.raises(FileNotFoundError):
        storage.read_text(record)


@pytest.fixture
def no_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as a command without a session sees it, whatever a Spark test on the same
    xdist worker attached before; the worker's files come back afterwards."""
    monkeypatch.setattr(storage, "_remote", storage._NO_SESSION)


@pytest.mark.usefixtures("no_session")
def test_object_storage_without_a_session_is_one_clear_error() -> None:
    assert not storage.reachable(RemotePath("s3a://lake/wh"))
    with pytest.raises(StorageUnavailable, match=r"cannot read s3a://lake/wh/x: .* has not"):
        storage.read_text(RemotePath("s3a://lake/wh/x"))
    storage.refuse_remote_files("a Connect target")
    with pytest.raises(StorageUnavailable, match="cannot list s3a://lake/wh: a Connect"):
        storage.names_in(RemotePath("s3a://lake/wh"))
