"""`runner lint`'s result cache (runner/lint/result_cache.py): an unchanged project is answered
from the cache with the findings a computed run gives, and any change to what decides the
findings (a model, a macro, a stream, project.yml, an env_var a model reads, the options)
computes them again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.cli.app import app
from runner.lint.result_cache import CACHE_ENV, MAX_AGE_SECONDS, result_key
from tests.unit.test_lint import DEDUPED, raw_merge

runner = CliRunner()
CACHED = "unchanged: from the lint cache"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The suite runs with the cache off (tests/conftest.py); these tests turn it on."""
    directory = tmp_path / "lint-cache"
    monkeypatch.setenv(CACHE_ENV, str(directory))
    return directory


def lint(root: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["lint", "-p", str(root), *args])
    return result.exit_code, result.output


def test_an_unchanged_project_is_answered_from_the_cache_with_the_same_findings(
    cache: Path, project_factory: Callable[..., Path]
) -> None:
    root = project_factory(
        {"bad": raw_merge(), "ok": DEDUPED.replace("silver.orders", "silver.ok")}
    )
    code, computed = lint(root)
    assert code == 1 and "DL003 error" in computed and CACHED not in computed
    assert len(list(cache.glob("*.json"))) == 1

    code, cached = lint(root)
    assert code == 1 and CACHED in cached
    assert cached.splitlines()[:-1] == computed.splitlines()[:-1]  # all but the timing line

    fresh = json.loads(lint(root, "-f", "json", "--no-cache")[1])
    assert json.loads(lint(root, "-f", "json")[1]) == fresh


@pytest.mark.parametrize(
    ("edit", "expect_code"),
    [
        (lambda root: (root / "models" / "bad.sql").write_text(DEDUPED), 0),
        (
            lambda root: (root / "project.yml").write_text(
                (root / "project.yml").read_text() + "lint:\n  disable: [DL003]\n"
            ),
            0,
        ),
        (
            lambda root: (root / "macros" / "extra.sql").write_text(
                "{% macro x() %}1{% endmacro %}"
            ),
            1,
        ),
        (
            lambda root: (root / "streams" / "orders.yml").write_text(
                (root / "streams" / "orders.yml").read_text().replace("maxFilesPerTrigger: 1", "")
            ),
            1,
        ),
        (
            lambda root: (
                (root / "seeds").mkdir() or (root / "seeds" / "c.csv").write_text("a\n1\n")
            ),
            1,
        ),
    ],
    ids=["model", "project.yml", "macro", "stream", "seed"],
)
def test_a_change_to_any_input_computes_the_findings_again(
    cache: Path,
    project_factory: Callable[..., Path],
    edit: Callable[[Path], object],
    expect_code: int,
) -> None:
    root = project_factory({"bad": raw_merge()})
    assert lint(root)[0] == 1
    assert CACHED in lint(root)[1]
    edit(root)
    code, output = lint(root)
    assert CACHED not in output, output
    assert code == expect_code, output
    assert CACHED in lint(root)[1]  # and the new result is kept


def test_an_env_var_a_model_reads_is_part_of_the_key(
    cache: Path, project_factory: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    body = raw_merge().split("\n", 1)[1]
    model = (
        "{{ config(stream='orders', target='silver.orders', unique_key='order_id') }}\n"
        "{% if env_var('LINT_CACHE_FLAVOUR', 'deduped') == 'raw' %}\n"
        f"{body}"
        "{% else %}\n"
        f"{DEDUPED.split(chr(10), 1)[1]}"
        "{% endif %}\n"
    )
    root = project_factory({"m": model})
    monkeypatch.delenv("LINT_CACHE_FLAVOUR", raising=False)
    assert lint(root)[0] == 0
    assert CACHED in lint(root)[1]
    monkeypatch.setenv("LINT_CACHE_FLAVOUR", "raw")
    code, output = lint(root)
    assert code == 1 and "DL003" in output and CACHED not in output


def test_a_computed_env_var_name_or_state_is_never_cached(
    cache: Path, project_factory: Callable[..., Path]
) -> None:
    model = DEDUPED + "-- {{ env_var('LINT_' ~ 'CACHE_NAME', 'x') }}\n"
    root = project_factory({"m": model})
    assert result_key(root, target=None, cli_vars={}, select=None, exclude=None) is None
    assert CACHED not in lint(root)[1] and CACHED not in lint(root)[1]
    assert not cache.exists()


def test_each_set_of_options_has_its_own_result(
    cache: Path, project_factory: Callable[..., Path]
) -> None:
    root = project_factory(
        {"bad": raw_merge(), "ok": DEDUPED.replace("silver.orders", "silver.ok")}
    )
    assert lint(root)[0] == 1
    code, output = lint(root, "--select", "ok")
    assert code == 0 and CACHED not in output and "1 model(s) clean" in output
    assert CACHED in lint(root, "--select", "ok")[1]
    code, output = lint(root, "--vars", "{day: 1}")
    assert code == 1 and CACHED not in output


def test_no_cache_flag_empty_variable_and_a_corrupt_entry_compute_the_findings(
    cache: Path, project_factory: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project_factory({"bad": raw_merge()})
    lint(root)
    assert CACHED not in lint(root, "--no-cache")[1]
    for entry in cache.glob("*.json"):
        entry.write_text("{not json")
    code, output = lint(root)
    assert code == 1 and CACHED not in output
    assert CACHED in lint(root)[1]  # the corrupt entry was replaced

    monkeypatch.setenv(CACHE_ENV, "")
    other = project_factory({"bad": raw_merge()})
    lint(other)
    assert CACHED not in lint(other)[1]


def test_a_run_answered_from_the_cache_imports_no_parser_or_template_engine(
    cache: Path, project_factory: Callable[..., Path]
) -> None:
    root = project_factory({"bad": raw_merge()})
    code = (
        "import sys\n"
        "from runner.cli.app import app\n"
        "try:\n"
        f"    app(['lint', '-p', {str(root)!r}])\n"
        "except SystemExit as exit:\n"
        "    print('exit', exit.code)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'sqlglot', 'jinja2', 'pyspark'}))\n"
    )
    env = {**os.environ, CACHE_ENV: str(cache)}
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        for _ in range(2)
    ]
    computed, cached = (run.stdout.splitlines() for run in runs)
    assert computed[-2:] == ["exit 1", "['jinja2', 'sqlglot']"], runs[0].stderr
    assert CACHED in cached[-3] and cached[-2:] == ["exit 1", "[]"], runs[1].stderr


def test_entries_of_projects_not_linted_for_a_week_are_removed(
    cache: Path, project_factory: Callable[..., Path]
) -> None:
    cache.mkdir()
    stale, recent = cache / "0123456789abcdef01234567.json", cache / "76543210fedcba9876543210.json"
    for entry in (stale, recent):
        entry.write_text("{}")
    week_ago = time.time() - MAX_AGE_SECONDS - 60
    os.utime(stale, (week_ago, week_ago))
    lint(project_factory({"ok": DEDUPED}))
    assert not stale.exists() and recent.exists()
    assert len(list(cache.glob("*.json"))) == 2  # the recent one and this run's
