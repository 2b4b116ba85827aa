"""Where each second of a batch goes, on real Spark and Delta: the event-log row's phases, and
`runner history --timings` after a `runner run` (whose checkpoint commits exist)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from runner import project as project_loader
from runner.cli.progress import console
from runner.spark.batch.eventlog import event_log_location
from runner.spark.batch.report import BATCH_PHASES
from tests.conftest import land_events, write_project

MODEL = """{{ config(stream='orders', target='timed.orders', unique_key='order_id',
    columns='order_id STRING, status STRING, amount DECIMAL(10,2), updated_at TIMESTAMP',
    expectations={'has_key': 'order_id IS NOT NULL'}) }}
CREATE OR REPLACE TEMPORARY VIEW latest AS
{{ dedupe(batch, key='order_id', order_by='updated_at DESC') }};
MERGE INTO {{ this }} AS t USING latest AS s ON t.order_id = s.order_id
WHEN MATCHED AND s.op = 'D' THEN DELETE
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT *;
"""


def event(order: str, status: str, hhmm: str, op: str = "U") -> str:
    return json.dumps(
        {"order_id": order, "customer_id": "c1", "status": status, "amount": 1,
         "updated_at": f"2024-01-01T{hhmm}:00", "op": op}
    )  # fmt: skip


def test_history_timings_shows_each_part_of_each_batch(
    spark: SparkSession, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    root = write_project(tmp_path / "timed", {"timed": MODEL})
    landing = root / "landing" / "orders"
    land_events(landing, "1.json", [event("o1", "new", "10:00"), event("o2", "new", "10:00")])
    land_events(landing, "2.json", [event("o1", "paid", "11:00"), event("o2", "x", "11:00", "D")])
    assert cli("run", "--model", "timed", "--project-dir", root).exit_code == 0

    # The event-log rows: the phases in run_batch's order, within the batch's seconds.
    project = project_loader.load(root)
    rows = spark.read.format("delta").load(str(event_log_location(project.target)))
    rows = rows.where("model = 'timed'").orderBy("batch_id").collect()
    assert [r["batch_id"] for r in rows] == [0, 1]
    for row in rows:
        phases = [(p["phase"], p["seconds"]) for p in row["phases"]]
        assert [name for name, _ in phases] == list(BATCH_PHASES)
        assert all(took >= 0 for _, took in phases)
        assert phases[0][1] > 0  # reading and persisting the batch is never free
        spent = sum(took for _, took in phases) + sum(s["seconds"] for s in row["statements"])
        rounding = 0.0005 * (len(phases) + len(row["statements"]) + 1)  # each to the ms
        assert spent <= row["seconds"] + rounding

    result = cli("history", "-m", "timed", "-p", root, "--timings", "--format", "json")
    assert result.exit_code == 0, result.output
    timings = json.loads(result.output)
    batches = timings["batches"]
    assert [b["batch_id"] for b in batches] == [0, 1]
    for batch, row in zip(batches, rows, strict=True):
        assert batch["total"] == row["seconds"]
        assert batch["phases"] == {p["phase"]: p["seconds"] for p in row["phases"]}
        # after the batch: its row handed to the file it waits in (to the millisecond: a few
        # at most), then Spark's commit to the checkpoint
        assert 0 <= batch["event_log"] < 60
        assert 0 < batch["checkpoint"] < 60
        merge = next(s for s in batch["statements"] if s["keyword"] == "MERGE")
        assert merge["label"] == "batch[1]"
        assert {"execution", "scan", "rewrite"} <= set(merge["delta"])
        assert 0 < merge["delta"]["execution"] <= merge["seconds"]
        view = next(s for s in batch["statements"] if s["keyword"] == "CREATE")
        assert view["delta"] == {}  # no Delta commit
    assert timings["median"]["event_log"] == round(
        (batches[0]["event_log"] + batches[1]["event_log"]) / 2, 3
    )

    monkeypatch.setattr(console, "width", 120)  # the table has a column per part
    table = cli("history", "-m", "timed", "-p", root, "--timings").output
    median_line = next(line for line in table.splitlines() if line.lstrip().startswith("median"))
    median = timings["median"]
    merge = next(s for s in median["statements"] if s["keyword"] == "MERGE")
    cells = [median["total"], *median["phases"].values(), merge["seconds"], merge["delta"]["scan"]]
    cells += [median["event_log"], median["checkpoint"]]
    for value in cells:  # the table shows the JSON's numbers
        assert f" {value:.2f}" in median_line
    assert "–" not in median_line  # every part is known for this run
