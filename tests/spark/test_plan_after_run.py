"""`runner run` records what each model ran; `runner plan` afterwards reads it (real Spark)."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession

from runner.last_run import LAST_RUN_FILE
from tests.spark.test_orders_pipeline import land_sample


def test_run_records_what_ran_and_plan_sees_a_sql_edit(
    spark: SparkSession, cli, example_project: Path
) -> None:
    land_sample(example_project, ["001.json", "002.json"])
    result = cli("run", "--select", "orders_merge+", "--project-dir", example_project)
    assert result.exit_code == 0, result.output

    checkpoints = example_project / "target" / "local" / "checkpoints"
    for model in ("orders_merge", "customer_totals"):
        record = json.loads((checkpoints / model / LAST_RUN_FILE).read_text())
        assert record["model"] == model and len(record["fingerprint"]) == 64
    assert not (checkpoints / "orders_kafka_merge").exists()  # not selected: never ran

    planned = cli("plan", "--format", "json", "--project-dir", example_project)
    assert planned.exit_code == 0, planned.output
    status = {m["model"]: m["status"] for m in json.loads(planned.stdout)["models"]}
    assert status == {
        "orders_merge": "no_change",
        "customer_totals": "no_change",
        "orders_kafka_merge": "new",
    }

    model = example_project / "models" / "orders_merge.sql"
    model.write_text(
        model.read_text().replace(
            "WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET *",
            "WHEN MATCHED THEN UPDATE SET *",
        )
    )
    planned = cli("plan", "--select", "orders_merge", "--project-dir", example_project)
    assert planned.exit_code == 1, planned.output
    assert "-WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET *" in planned.output
    assert "+WHEN MATCHED THEN UPDATE SET *" in planned.output
    assert "1 of 1 model(s) need action: orders_merge" in planned.output
    as_json = cli("plan", "-s", "orders_merge", "--format", "json", "-p", example_project)
    (entry,) = json.loads(as_json.stdout)["models"]
    assert (entry["status"], entry["needs_action"], as_json.exit_code) == ("logic", True, 1)
    assert "+WHEN MATCHED THEN UPDATE SET *\n" in entry["diff"]
