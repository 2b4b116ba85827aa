"""JSON and CSV files with malformed lines, wrong-typed values and undeclared fields: every
input line ends up in the target, in the quarantine (file, line, raw text, reason) or, for
extra fields, in ``_rescued_data`` or a column schema_drift added; checked against an oracle
written down line by line."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pyspark.sql import SparkSession

from tests.conftest import write_project

SCHEMA = "order_id STRING, amount DECIMAL(10,2), updated_at TIMESTAMP"
STREAMS = f"""streams:
  orders:
    format: json
    path: landing/json
    schema: "{SCHEMA}"
    options:
      maxFilesPerTrigger: 1
  orders_csv:
    format: csv
    path: landing/csv
    schema: "{SCHEMA}"
    options:
      header: true
"""
MODEL = """{{{{ config(stream='{stream}', target='{target}', unique_key='order_id'{extra}) }}}}
MERGE INTO {{{{ this }}}} AS t USING {{{{ batch }}}} AS s ON t.order_id = s.order_id
WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
"""
T = '"updated_at":"2024-01-01T10:00:00Z"'
# (file, line text, expected: ("good", rescued JSON or None) or ("bad", reason))
JSON_LINES = [
    ("a.json", f'{{"order_id":"j1","amount":1.5,{T}}}', ("good", None)),
    ("a.json", f'{{"order_id":"j2","amount":2,{T},"priority":"high","n":5}}',
     ("good", {"priority": "high", "n": 5})),
    ("a.json", '{"order_id":"j3",', ("bad", "invalid JSON")),
    ("a.json", "", None),  # blank: not input
    ("a.json", "[1, 2]", ("bad", "not a JSON object")),
    ("a.json", f'{{"order_id":"j4","amount":"ten",{T}}}',
     ("bad", "schema mismatch: amount (DECIMAL(10,2))")),
    ("b.json", '{"order_id":"j5","amount":3,"updated_at":"yesterday"}',
     ("bad", "schema mismatch: updated_at (TIMESTAMP)")),
    ("b.json", f'{{"order_id":"j6","amount":"7.25",{T}}}', ("good", None)),
]  # fmt: skip
CSV_LINES = [
    ("a.csv", "order_id,amount,updated_at,priority", None),  # the header
    ("a.csv", "c1,1.5,2024-01-01T10:00:00Z,high", ("good", {"priority": "high"})),
    ("a.csv", "c2,ten,2024-01-01T10:00:00Z,low",
     ("bad", "schema mismatch: amount (DECIMAL(10,2))")),
    ("a.csv", "c3,2.5", ("bad", "wrong number of fields: 2 of 4")),
    ("a.csv", "c4,3,yesterday,", ("bad", "schema mismatch: updated_at (TIMESTAMP)")),
    ("a.csv", '"c5",4,2024-01-01T10:00:00Z,"urgent, call"', ("good", {"priority": "urgent, call"})),
]  # fmt: skip


def land(root: Path, lines: list[tuple[str, str, object]], folder: str) -> None:
    files: dict[str, list[str]] = {}
    for name, text, _ in lines:
        files.setdefault(name, []).append(text)
    for index, (name, texts) in enumerate(files.items()):
        path = root / "landing" / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(texts) + "\n")
        os.utime(path, (1_700_000_000 + index, 1_700_000_000 + index))


def oracle(lines: list[tuple[str, str, object]], folder: str):
    """Expected quarantine rows (position, raw, reason) and good rows (order_id -> rescued)."""
    bad, good, numbers = set(), {}, {}
    for name, text, expected in lines:
        numbers[name] = numbers.get(name, 0) + 1
        if expected is None:
            continue
        kind, detail = expected
        if kind == "bad":
            bad.add((f"landing/{folder}/{name}:{numbers[name]}", text, detail))
        else:
            good[text.split(",")[0].split(":")[-1].strip('"{')] = detail
    return bad, good


def quarantine(spark: SparkSession, root: Path, model: str) -> list:
    location = root / "target" / "warehouse" / "_quarantine" / model
    return spark.read.format("delta").load(str(location)).collect()


def test_json_and_csv_lines_are_all_accounted_for(spark: SparkSession, cli, tmp_path) -> None:
    root = write_project(
        tmp_path / "p",
        {
            "json_orders": MODEL.format(stream="orders", target="fq.json_orders", extra=""),
            "csv_orders": MODEL.format(
                stream="orders_csv",
                target="fq.csv_orders",
                extra=", columns='" + SCHEMA + "', schema_drift='append_new_columns'",
            ),
        },
        streams=STREAMS,
    )
    land(root, JSON_LINES, "json")
    land(root, CSV_LINES, "csv")

    result = cli("run", "--select", "json_orders csv_orders", "-p", root)
    assert result.exit_code == 0, result.output + result.stderr
    assert "json_orders batch 0: 2 rows in, 3 quarantined" in result.output

    for model, lines, folder in (
        ("json_orders", JSON_LINES, "json"),
        ("csv_orders", CSV_LINES, "csv"),
    ):
        bad, good = oracle(lines, folder)
        rows = quarantine(spark, root, model)
        assert {(r["position"], r["raw"], r["reason"]) for r in rows} == bad
        assert len(rows) == len(bad)  # none twice
        assert {r["source"] for r in rows} == {folder}
        assert all(r["file"].endswith(r["position"].split(":")[0]) for r in rows)
        assert {r["line"] for r in rows} == {int(p.split(":")[1]) for p, _, _ in bad}
        target = spark.table(f"fq.{model}").collect()
        assert {r["order_id"] for r in target} == set(good)
        input_lines = sum(1 for _, _, expected in lines if expected is not None)
        assert len(target) + len(rows) == input_lines  # every line: target or quarantine
        if model == "json_orders":  # no policy: extra fields kept as raw JSON
            rescued = {r["order_id"]: r["_rescued_data"] for r in target}
            assert {k: v and json.loads(v) for k, v in rescued.items()} == good
        else:  # append_new_columns: the extra CSV field became a column
            assert spark.table("fq.csv_orders").columns[-1] == "priority"
            assert {r["order_id"]: r["priority"] for r in target} == {
                k: v["priority"] for k, v in good.items()
            }

    log = spark.read.format("delta").load(str(root / "target/warehouse/_runner/event_log"))
    quarantined = {r["model"]: 0 for r in log.collect()}
    for r in log.collect():
        quarantined[r["model"]] += r["quarantined"]
    assert quarantined == {"json_orders": 4, "csv_orders": 3}
