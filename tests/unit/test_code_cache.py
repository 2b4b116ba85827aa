"""Compiled templates kept on disk between runs: reused while the sources are unchanged,
compiled again when one changes, and never a failure when the cache cannot be written. No JVM."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runner import project as project_loader
from runner.model_sql import compile_batch
from runner.templating import code_cache
from runner.templating.code_cache import CACHE_ENV

HEADER = "{{ config(stream='orders', target='silver.t', unique_key='order_id') }}\n"


def _sql(root: Path) -> str:
    project = project_loader.load(root)
    return compile_batch(project, project.model("m"), 0)[0].sql


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "template-cache"
    monkeypatch.setenv(CACHE_ENV, str(directory))
    return directory


def _entries(cache: Path) -> dict[Path, int]:
    return {entry: entry.stat().st_mtime_ns for entry in cache.rglob("*.cache")}


def test_a_second_load_reuses_the_compiled_templates(project_factory, cache: Path) -> None:
    root = project_factory({"m": HEADER + "SELECT {{ batch_id }} FROM {{ this }};"})
    assert _sql(root) == "SELECT 0 FROM silver.t"
    entries = _entries(cache)
    assert len(entries) >= 2  # the model and the built-in macro files
    assert _sql(root) == "SELECT 0 FROM silver.t"
    assert _entries(cache) == entries  # read, not written again
    assert not (root / "target").exists()  # nothing written in the project


def test_an_edited_model_is_compiled_again(project_factory, cache: Path) -> None:
    root = project_factory({"m": HEADER + "SELECT 1;"})
    assert _sql(root) == "SELECT 1"
    (root / "models" / "m.sql").write_text(HEADER + "SELECT 2 FROM {{ this }};")
    assert _sql(root) == "SELECT 2 FROM silver.t"


def test_an_unwritable_cache_is_no_error(project_factory, cache: Path) -> None:
    root = project_factory({"m": HEADER + "SELECT 1;"})
    cache.write_text("a file where the cache directory would go")
    assert _sql(root) == "SELECT 1"
    assert _sql(root) == "SELECT 1"


def test_no_cache_when_the_variable_is_set_empty(
    project_factory, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, "")
    assert _sql(project_factory({"m": HEADER + "SELECT 1;"})) == "SELECT 1"
    assert not cache.exists()


def test_entries_written_long_ago_are_removed(
    project_factory, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project_factory({"m": HEADER + "SELECT 1;"})
    _sql(root)
    for entry in _entries(cache):
        os.utime(entry, (1, 1))  # written in 1970
    (root / "models" / "m.sql").write_text(HEADER + "SELECT 2;")
    assert _sql(root) == "SELECT 2"  # compiled and written again, in the same process:
    assert len(_entries(cache)) > 1  # a process removes old entries once, at its first write
    monkeypatch.setattr(code_cache, "_PRUNED", set())  # a later run: another process
    (root / "models" / "m.sql").write_text(HEADER + "SELECT 3;")
    assert _sql(root) == "SELECT 3"  # compiled and written again: the old entries are removed
    assert len(_entries(cache)) == 1  # the edited model's, just written
