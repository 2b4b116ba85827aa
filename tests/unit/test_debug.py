"""`runner debug`: each check, passing and failing, and the command's exit code. No JVM."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.cli.app import app
from runner.cli.debug_checks import jars_check, parse_java_version, target_check, writable_check
from runner.project import load

JAVA = Path("/usr/bin/java")


@pytest.mark.parametrize(
    ("output", "ok"),
    [
        ('openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment', True),
        ('openjdk version "21" 2023-09-19', True),
        ('java version "1.8.0_392"', False),
        ('openjdk version "11.0.2" 2019-01-15', False),
    ],
)
def test_java_needs_17_or_later(output: str, ok: bool) -> None:
    check = parse_java_version(JAVA, output)
    assert check.ok is ok
    assert output.splitlines()[0] in check.found and str(JAVA) in check.found
    assert ok or "needs Java 17" in check.fix


def test_unreadable_java_output_fails() -> None:
    assert not parse_java_version(JAVA, "Error: could not open jvm.cfg").ok


def test_paths_writable_or_creatable(tmp_path: Path) -> None:
    assert writable_check("warehouse", tmp_path).ok
    later = writable_check("warehouse", tmp_path / "a" / "b")
    assert later.ok and "will be created" in later.found
    (tmp_path / "file").write_text("x")
    blocked = writable_check("checkpoints", tmp_path / "file" / "cp")
    assert not blocked.ok and "is not a directory" in blocked.found
    assert "checkpoints:" in blocked.fix


def test_an_empty_jar_cache_says_how_it_fills(tmp_path: Path) -> None:
    check = jars_check(tmp_path)
    assert not check.ok and "not in the cache" in check.found
    assert "RUNNER_JARS_DIR" in check.fix


def test_a_cluster_that_does_not_answer_fails_and_local_passes(tmp_path: Path) -> None:
    (tmp_path / "project.yml").write_text(
        "name: x\ndefault_target: local\ntargets:\n  local: {}\n"
        "  cluster: {master: 'spark://127.0.0.1:1'}\n"
    )
    assert target_check(load(tmp_path)).ok
    check = target_check(load(tmp_path, "cluster"))
    assert not check.ok and "cannot be reached" in check.found


def test_debug_exits_1_on_a_failed_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "project.yml").write_text("name: x\n")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    result = CliRunner().invoke(app, ["debug", "-p", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "FAIL java: JAVA_HOME is" in result.stdout and "to fix: install Java" in result.stdout
    assert "ok   warehouse:" in result.stdout
