"""`runner`'s exit (runner/cli/app.py `leave`): a pure-Python command skips the interpreter's
teardown, but its exit handlers still run, its output is all written and its exit code kept."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# prints through a buffered stdout, registers an exit handler, then leaves with code 3
SCRIPT = """
import atexit, sys
{setup}
from runner.cli.app import leave
atexit.register(lambda: print("exit handler ran"))
print("output", end=" ")
leave(3)
"""


def run_script(setup: str) -> subprocess.CompletedProcess[str]:
    code = SCRIPT.format(setup=setup)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize(
    "setup",
    [
        "",  # the fast way out
        "import threading; threading.Thread(target=lambda: __import__('time').sleep(0.2)).start()",
        "import types; sys.modules['pyspark'] = types.ModuleType('pyspark')",
    ],
    ids=["pure-python", "thread-running", "spark-imported"],
)
def test_leave_keeps_output_exit_handlers_and_code(setup: str) -> None:
    done = run_script(setup)
    assert done.returncode == 3, done.stderr
    assert done.stdout == "output exit handler ran\n"
    assert done.stderr == ""


def test_runner_lint_exit_codes_and_output_survive_the_fast_exit(tmp_path) -> None:
    # a project whose one model fails to parse: findings on stdout, exit 1
    (tmp_path / "models").mkdir()
    (tmp_path / "streams").mkdir()
    (tmp_path / "project.yml").write_text(
        "name: p\ndefault_target: local\ntargets:\n  local:\n    warehouse: w\n    checkpoints: c\n"
    )
    (tmp_path / "streams" / "s.yml").write_text(
        'streams:\n  s:\n    format: json\n    path: in\n    schema: "id STRING"\n'
    )
    (tmp_path / "models" / "m.sql").write_text(
        "{{ config(stream='s', target='t.m', unique_key='id') }}\nMERGE INTO x USING y\n"
    )
    runner = [sys.executable, "-c", "from runner.cli.app import main; main()"]
    done = subprocess.run(
        [*runner, "lint", "-p", str(tmp_path), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)  # the whole document reached the pipe
    assert [(f["file"], f["code"]) for f in report["findings"]] == [("models/m.sql", "DL001")]
