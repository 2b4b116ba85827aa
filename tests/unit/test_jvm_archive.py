"""The tests' JVM class archive: its name, and the JVM options that use it only when it is there
(making it needs a JVM: scripts/test.sh makes it, bench/class_archive_bench.py measures it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner_devtools import jvm_archive


@pytest.fixture
def archive_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(jvm_archive, "ARCHIVE_DIR", tmp_path)
    return tmp_path


def test_the_archive_is_named_for_this_java_pyspark_and_delta(
    archive_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = jvm_archive.archive_path()
    assert path is not None and path.parent == archive_dir and path.suffix == ".jsa"
    assert jvm_archive.archive_path() == path  # the same machine, the same name
    monkeypatch.setattr(jvm_archive, "delta_coordinates", lambda: ["io.delta:delta-spark:9.9"])
    assert jvm_archive.archive_path() != path  # another Delta, another archive


def test_no_archive_no_options(archive_dir: Path) -> None:
    assert jvm_archive.jvm_options() == ""


def test_an_archive_is_mapped_quietly(archive_dir: Path) -> None:
    path = jvm_archive.archive_path()
    assert path is not None
    path.write_bytes(b"")
    options = jvm_archive.jvm_options().split()
    assert f"-XX:SharedArchiveFile={path}" in options
    # a JVM on another class path says it cannot use it, in the stderr tests read
    assert "-Xlog:cds=off" in options
