"""Golden fixtures: for each rule, models that trigger it and models that do not.

tests/unit/fixtures/lint/<CODE>/models/ holds the models, run inside the shared project
fixtures/lint/_project/; <CODE>/expected.txt lists every finding (``path:line:col CODE``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runner.lint import all_rules, lint_project

FIXTURES = Path(__file__).parent / "fixtures" / "lint"
CODES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith("_"))


def _project_for(code: str, tmp_path: Path) -> Path:
    root = tmp_path / code
    shutil.copytree(FIXTURES / "_project", root)
    shutil.copytree(FIXTURES / code, root, dirs_exist_ok=True)
    return root


def _expected(code: str) -> list[str]:
    lines = (FIXTURES / code / "expected.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_every_rule_has_a_fixture() -> None:
    assert [rule.code for rule in all_rules()] == CODES


@pytest.mark.parametrize("code", CODES)
def test_rule_fixture_findings(code: str, tmp_path: Path) -> None:
    result = lint_project(_project_for(code, tmp_path))
    found = [f"{v.path}:{v.line}:{v.col} {v.code}" for v in result.violations]
    assert found == _expected(code)


@pytest.mark.parametrize("code", CODES)
def test_rule_fixture_triggers_its_rule_and_spares_good_models(code: str, tmp_path: Path) -> None:
    result = lint_project(_project_for(code, tmp_path))
    assert any(v.code == code for v in result.violations), f"no {code} finding"
    assert [v for v in result.violations if Path(v.path).name.startswith("good")] == []
    assert list((FIXTURES / code / "models").glob("good*.sql")), "no model that passes"
