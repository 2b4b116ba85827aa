"""`runner lint` never crashes: token mutations of the example models always give findings.

Hypothesis deletes, duplicates, swaps and inserts tokens (SQL keywords, punctuation, Jinja
delimiters) in one of the example project's models; `runner lint --format json` must exit 0 or 1
and print valid JSON whose findings all name a file and a line, whatever the text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from runner.cli.app import app
from runner_devtools.example_project import copy_example

REPO = Path(__file__).resolve().parents[2]
MODELS = sorted((REPO / "models").glob("*.sql"))
# Words and symbols whose loss, doubling or misplacement breaks SQL or Jinja in typical ways.
INSERTS = [
    "MERGE", "INTO", "USING", "ON", "WHEN", "MATCHED", "NOT", "THEN", "UPDATE", "SET", "INSERT",
    "DELETE", "BY", "SOURCE", "SELECT", "FROM", "WHERE", "(", ")", ";", ",", "'", "`", "*",
    "{{", "}}", "{%", "%}", "{#", "#}", "config(", "ref('ghost')", "\n", "--", "/*", "\x00",
]  # fmt: skip
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


@st.composite
def mutated_model(draw: st.DrawFn) -> tuple[str, str]:
    """(file name, mutated text) of one example model after 1-4 token mutations."""
    model = draw(st.sampled_from(MODELS))
    tokens = _tokens(model.read_text())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, max(len(tokens) - 1, 0)))
        action = draw(st.sampled_from(["delete", "duplicate", "swap", "insert", "truncate"]))
        if action == "delete" and tokens:
            del tokens[at]
        elif action == "duplicate" and tokens:
            tokens.insert(at, tokens[at])
        elif action == "swap" and len(tokens) > at + 2:
            tokens[at], tokens[at + 2] = tokens[at + 2], tokens[at]
        elif action == "insert":
            tokens.insert(at, draw(st.sampled_from(INSERTS)))
        elif action == "truncate":
            tokens = tokens[:at]
    return model.name, "".join(tokens)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_example(tmp_path_factory.mktemp("fuzz") / "example")


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(mutated_model())
def test_lint_never_crashes_on_mutated_models(project: Path, mutation: tuple[str, str]) -> None:
    name, text = mutation
    path = project / "models" / name
    original = (REPO / "models" / name).read_text()
    path.write_text(text)
    try:
        result = CliRunner().invoke(app, ["lint", "--format", "json", "-p", str(project)])
    finally:
        path.write_text(original)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"traceback for mutated {name}:\n{text}\n{result.output}"
    )
    assert result.exit_code in (0, 1), f"exit {result.exit_code} for mutated {name}:\n{text}"
    report = json.loads(result.stdout)
    assert isinstance(report, dict)
    for finding in report["findings"]:
        assert finding["file"] and finding["line"] >= 1
        assert finding["code"] != "DL000", f"a rule crashed on mutated {name}:\n{text}\n{finding}"
