"""The pre-commit hook of .pre-commit-hooks.yaml, run by pre-commit on a sample repository: a
git repository holding the example project, with a model broken and then fixed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which(
    "pre-commit"
)

pytestmark = pytest.mark.skipif(
    PRE_COMMIT is None or shutil.which("git") is None,
    reason="pre-commit (the test extra) and git are needed",
)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _try_hook(repo: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``pre-commit try-repo <this repository> runner-lint`` on the staged files of ``repo``:
    the hook as this working tree defines it, with the `runner` of this Python."""
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(
        [str(PRE_COMMIT), "try-repo", str(REPO), "runner-lint", "--verbose"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_hook_fails_on_a_broken_model_and_passes_once_it_is_fixed(
    example_project: Path, tmp_path: Path
) -> None:
    repo = example_project
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "test@example.com")
    _git(repo, "config", "user.name", "test")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "example project")

    model = repo / "models" / "orders_merge.sql"
    good = model.read_text()
    broken_text = good.replace("stream='orders'", "stream='ordrs'")  # a stream name typo
    assert broken_text != good
    model.write_text(broken_text)
    _git(repo, "add", "-A")
    broken = _try_hook(repo, tmp_path)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "runner lint" in broken.stdout and "Failed" in broken.stdout
    assert "models/orders_merge.sql:2:13: DL007 error: config(stream='ordrs')" in broken.stdout
    assert "1 error(s)" in broken.stdout  # the typo once: not also as DL010

    # the typo fixed, in a change to the model (the hook looks at staged files)
    model.write_text(good.replace("-- One row per order:", "-- One row per order (fixed):"))
    _git(repo, "add", "-A")
    fixed = _try_hook(repo, tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Passed" in fixed.stdout and "model(s) clean" in fixed.stdout


def test_the_hook_is_skipped_when_no_project_file_is_staged(
    example_project: Path, tmp_path: Path
) -> None:
    repo = example_project
    _git(repo, "init", "-q")
    (repo / "README.md").write_text("notes\n")
    _git(repo, "add", "README.md")
    result = _try_hook(repo, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no files to check" in result.stdout.lower()
