"""A secret from env_var() reaches Spark with its real value and nothing the runner writes or
prints: the table property is on the Delta table, the conf on the session, while no file under
target/ (compiled SQL, manifest, docs, checkpoints, event log) and no output holds it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.conftest import ORDERS_SCHEMA, land_events, write_project

PLANTED = "S3cr3tPlantedSpark42"
VARIABLE = "RUNNER_SPARK_TEST_SECRET"
SHOWN = f"env_var('{VARIABLE}')"
# keys not named like secrets: Spark shows its own redaction of those (SHOW TBLPROPERTIES)
CONF_KEY = "spark.hadoop.runner.planted"

MODEL = (
    "{{ config(stream='orders', target='secrets.orders', unique_key='order_id', "
    "sequence_by='updated_at', "
    f"table_properties={{'my.planted': env_var('{VARIABLE}')}}) }}}}\n"
    "{{ merge(delete_column='op') }}\n"
)
STREAMS = (
    "streams:\n  orders:\n    format: json\n    path: landing/orders\n"
    f'    schema: "{ORDERS_SCHEMA}"\n'
    "    options:\n      maxFilesPerTrigger: 1\n"
    f"      ignoredToken: \"{{{{ env_var('{VARIABLE}') }}}}\"\n"
)


def test_a_planted_secret_is_used_by_spark_and_written_nowhere(
    spark: SparkSession, cli: Callable, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(VARIABLE, PLANTED)
    root = write_project(tmp_path / "p", {"orders_merge": MODEL}, streams=STREAMS)
    project_yml = root / "project.yml"
    project_yml.write_text(
        project_yml.read_text() + f"      {CONF_KEY}: \"{{{{ env_var('{VARIABLE}') }}}}\"\n"
    )
    event = {"order_id": "o1", "customer_id": "c1", "status": "new", "amount": 1.5}
    event |= {"updated_at": "2024-01-01T10:00:00", "op": "U"}
    land_events(root / "landing" / "orders", "a.json", [json.dumps(event)])

    outputs = []
    for command in (["run", "--model", "orders_merge"], ["compile"], ["docs", "generate"]):
        result = cli(*command, "--project-dir", root)
        assert result.exit_code == 0, result.output + result.stderr
        outputs.append(result.output + result.stderr)
    history = cli("history", "--model", "orders_merge", "--format", "json", "--project-dir", root)
    outputs.append(history.output + history.stderr)

    # the real value where it runs: the Delta table's property, the session's conf
    rows = spark.sql("SHOW TBLPROPERTIES secrets.orders").collect()
    properties = {row["key"]: row["value"] for row in rows}
    assert properties["my.planted"] == PLANTED
    assert spark.conf.get(CONF_KEY) == PLANTED
    assert spark.table("secrets.orders").count() == 1

    # nowhere else: every file under target/ but the target table itself (whose Delta log
    # holds its properties), the event log and checkpoints included; every line printed
    table = (root / "target" / "warehouse" / "secrets" / "orders").resolve()
    files = [p for p in (root / "target").rglob("*") if p.is_file() and table not in p.parents]
    names = {p.name for p in files}
    assert {"manifest.json", "orders_merge.sql", "index.html"} <= names
    assert any("event_log" in p.parts for p in files) and any(
        "checkpoints" in p.parts for p in files
    )
    for path in files:
        assert PLANTED.encode() not in path.read_bytes(), path
    for text in outputs:
        assert PLANTED not in text
    assert "orders_merge batch 0" in outputs[0]
    assert f"'my.planted' = '{SHOWN}'" in (root / "target/compiled/orders_merge.sql").read_text()
