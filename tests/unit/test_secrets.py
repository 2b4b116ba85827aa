"""Values from env_var(): used where they run, shown as env_var('NAME') everywhere else
(runner/secrets.py). No JVM: the commands here never start Spark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from runner.errors import ConfigError
from runner.project import load
from runner.secrets import Secret, SecretNotSet, redact, redact_data, render_env_vars, reveal
from tests.conftest import ORDERS_SCHEMA, write_project

RUNNER = str(Path(sys.executable).parent / "runner")
PLANTED = "S3cr3tPlanted42"
VARIABLE = "RUNNER_TEST_PLANTED_SECRET"
SHOWN = f"env_var('{VARIABLE}')"

MODEL = (
    "{{ config(stream='orders', target='silver.orders', unique_key='order_id', "
    "sequence_by='updated_at', "
    f"table_properties={{'delta.appendOnly': 'false', 'my.token': env_var('{VARIABLE}')}}) }}}}\n"
    "{{ merge(delete_column='op') }}\n"
)
STREAMS = (
    "streams:\n  orders:\n    format: json\n    path: landing/orders\n"
    f'    schema: "{ORDERS_SCHEMA}"\n'
    "    options:\n      maxFilesPerTrigger: 1\n"
    f"      kafka.sasl.jaas.config: \"user='u' password='{{{{ env_var('{VARIABLE}') }}}}';\"\n"
)


def planted_project(root: Path) -> Path:
    """A project with the secret in spark_conf, a model's table_properties and stream options."""
    write_project(root, {"orders_merge": MODEL}, streams=STREAMS)
    project_yml = root / "project.yml"
    project_yml.write_text(
        project_yml.read_text()
        + f"      spark.hadoop.fs.s3a.secret.key: \"{{{{ env_var('{VARIABLE}') }}}}\"\n"
    )
    return root


def run(root: Path, *args: str, secret: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in __import__("os").environ.items() if k != VARIABLE}
    if secret is not None:
        env[VARIABLE] = secret
    return subprocess.run(
        [RUNNER, *args, "--project-dir", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=root,
    )


@pytest.mark.parametrize("secret", [PLANTED, None], ids=["set", "unset"])
def test_a_planted_secret_is_in_no_file_under_target_and_no_output(
    tmp_path: Path, secret: str | None
) -> None:
    root = planted_project(tmp_path / "project")
    outputs = []
    for command in (["lint"], ["compile"], ["docs", "generate"], ["test", "--show-sql"]):
        result = run(root, *command, secret=secret)
        assert result.returncode == 0, (command, result.stdout, result.stderr)
        outputs.append(result.stdout + result.stderr)
    files = [p for p in (root / "target").rglob("*") if p.is_file()]
    assert {"manifest.json", "orders_merge.sql", "index.html"} <= {p.name for p in files}
    for path in files:
        assert PLANTED.encode() not in path.read_bytes(), path
    assert not any(PLANTED in text for text in outputs)
    # each place the secret was used shows the variable's name instead
    manifest = (root / "target" / "compiled" / "manifest.json").read_text()
    assert f'"my.token": "{SHOWN}"' in manifest
    assert f'"spark.hadoop.fs.s3a.secret.key": "{SHOWN}"' in manifest
    assert f"password='{SHOWN}';" in manifest
    assert f"'my.token' = '{SHOWN}'" in (root / "target/compiled/orders_merge.sql").read_text()
    assert SHOWN in (root / "target" / "docs" / "index.html").read_text()


def test_where_a_value_runs_it_is_the_real_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.model_sql import compile_setup

    monkeypatch.setenv(VARIABLE, PLANTED)
    project = load(planted_project(tmp_path / "project"))
    stream = project.streams["orders"]
    assert stream.reader_options()["kafka.sasl.jaas.config"] == f"user='u' password='{PLANTED}';"
    assert project.target.revealed_conf()["spark.hadoop.fs.s3a.secret.key"] == PLANTED
    create = compile_setup(project, project.model("orders_merge")).create
    assert f"'my.token' = '{PLANTED}'" in create.executable
    assert PLANTED not in redact(create.sql)


def test_an_unset_variable_fails_only_where_its_value_runs_naming_it_and_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.model_sql import compile_setup

    monkeypatch.delenv(VARIABLE, raising=False)
    root = planted_project(tmp_path / "project")
    project = load(root)  # loads, renders and compiles without the variable
    create = compile_setup(project, project.model("orders_merge")).create
    with pytest.raises(SecretNotSet, match=f"reads environment variable {VARIABLE}") as model:
        _ = create.executable
    assert model.value.file == root / "models" / "orders_merge.sql"
    with pytest.raises(SecretNotSet, match="stream 'orders' option kafka.sasl") as option:
        project.streams["orders"].reader_options()
    line = (root / "streams" / "orders.yml").read_text().splitlines()[option.value.line - 1]
    assert line.strip().startswith("kafka.sasl.jaas.config:")
    with pytest.raises(SecretNotSet, match="spark_conf spark.hadoop.fs.s3a.secret.key") as conf:
        project.target.revealed_conf()
    line = (root / "project.yml").read_text().splitlines()[conf.value.line - 1]
    assert line.strip().startswith("spark.hadoop.fs.s3a.secret.key:")


def test_a_secret_compares_as_its_value_and_writes_as_its_name() -> None:
    secret = Secret("TOKEN", "abcdef")
    assert secret == "abcdef" and secret.startswith("abc") and {secret: 1}["abcdef"] == 1
    assert redact(f"x={secret}") == "x=env_var('TOKEN')"
    assert redact(str(secret)) == "env_var('TOKEN')"
    assert reveal(f"x={secret}", used_in="test") == "x=abcdef"
    assert repr(secret) == "env_var('TOKEN')"
    # a marked value that reached a JSON encoder before redaction is still found
    import json

    assert redact(json.dumps({"k": str(secret)})) == '{"k": "env_var(\'TOKEN\')"}'
    assert redact_data({"a": [str(secret), ("b", str(secret))]}) == {
        "a": ["env_var('TOKEN')", ["b", "env_var('TOKEN')"]]
    }


def test_a_value_handed_to_spark_is_hidden_when_spark_quotes_it_back() -> None:
    revealed = reveal(str(Secret("QUOTED_TOKEN", "quoted-back-value")), used_in="test")
    message = f"[PARSE_SYNTAX_ERROR] near '{revealed}'"
    assert redact(message) == "[PARSE_SYNTAX_ERROR] near 'env_var('QUOTED_TOKEN')'"


def test_yaml_values_render_env_var_and_nothing_else() -> None:
    rendered = render_env_vars(
        "a {{ env_var('X_ONE') }} b {{ env_var(\"X_TWO\", 'dflt') }}", what="w", file=None, line=1
    )
    assert redact(rendered) == "a env_var('X_ONE') b env_var('X_TWO')"
    with pytest.raises(ConfigError, match="the only template allowed here"):
        render_env_vars("{{ var('x') }}", what="stream 's' option o", file=None, line=3)


@pytest.mark.parametrize("key", ["warehouse", "checkpoints"])
def test_env_var_in_a_target_path_is_an_error_at_its_line(tmp_path: Path, key: str) -> None:
    root = write_project(tmp_path / "project", {})
    text = (root / "project.yml").read_text()
    old = f"    {key}: target/{key if key == 'checkpoints' else 'warehouse'}\n"
    assert old in text
    (root / "project.yml").write_text(
        text.replace(old, f"    {key}: \"{{{{ env_var('DATA_ROOT') }}}}/x\"\n")
    )
    with pytest.raises(ConfigError, match=f"{key}: templates such as env_var") as caught:
        load(root)
    line = (root / "project.yml").read_text().splitlines()[caught.value.line - 1]
    assert line.strip().startswith(f"{key}:")


def test_run_stops_before_spark_at_each_unset_value_it_would_hand_spark(tmp_path: Path) -> None:
    """``runner run`` checks the Spark conf, the stream's options, then the model's statements:
    exit 2, one located line, nothing under target/ (no JVM, no checkpoint)."""
    root = planted_project(tmp_path / "project")
    project_yml, streams_yml = root / "project.yml", root / "streams" / "orders.yml"
    expected = [
        (project_yml, "spark_conf spark.hadoop.fs.s3a.secret.key reads", "spark.hadoop.fs.s3a"),
        (streams_yml, "stream 'orders' option kafka.sasl.jaas.config reads", "kafka.sasl"),
        (root / "models" / "orders_merge.sql", "setup[1] (CREATE) reads", "{{ config("),
    ]
    for file, message, marker in expected:
        result = run(root, "run", "--model", "orders_merge", secret=None)
        assert result.returncode == 2, result.stderr
        first = result.stderr.splitlines()[0]
        line = next(n for n, text in enumerate(file.read_text().splitlines(), 1) if marker in text)
        assert first.startswith(f"error: {file.relative_to(root)}:{line}: {message}"), first
        assert f"environment variable {VARIABLE}, which is not set" in first
        assert not (root / "target").exists()
        if file != root / "models" / "orders_merge.sql":  # take it away: the next one shows
            file.write_text(
                "".join(t for t in file.read_text().splitlines(True) if marker not in t)
            )
