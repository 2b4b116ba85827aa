"""The bad-input suite, Spark half: a file whose lines break the model's rules.

schema_drift='fail' and a JSON line with a field the stream does not declare: exit 1, one
located line naming the field, and the target, the quarantine and the checkpoint's commits
exactly as before (the batch's malformed line is not quarantined either: the batch stopped
before any write). Fixed (append_new_columns) and run again, nothing is lost: the field becomes
a column, the malformed line is quarantined once."""

from __future__ import annotations

import re
from pathlib import Path

from pyspark.sql import SparkSession

from tests.conftest import land_events, write_project

SCHEMA = "order_id STRING, amount DECIMAL(10,2)"
STREAMS = f"""streams:
  orders:
    format: json
    path: landing
    schema: "{SCHEMA}"
"""
MODEL = """{{{{ config(
    stream='orders', target='bad.orders', unique_key='order_id', columns='{schema}',
    schema_drift='{policy}',
) }}}}
MERGE INTO {{{{ this }}}} AS t USING {{{{ batch }}}} AS s ON t.order_id = s.order_id
WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
"""


def state(root: Path) -> dict[str, bytes]:
    """Target, quarantine and committed batches, byte for byte."""
    base = root / "target"
    chosen = [
        *base.glob("warehouse/bad/orders/**/*"),
        *base.glob("warehouse/_quarantine/**/*"),
        *base.glob("checkpoints/m/commits/*"),
    ]
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(chosen) if p.is_file()}


def test_drift_fail_stops_before_any_write_and_a_fix_loses_nothing(
    spark: SparkSession, cli, tmp_path: Path
) -> None:
    model = MODEL.format(schema=SCHEMA, policy="fail")
    root = write_project(tmp_path / "p", {"m": model}, streams=STREAMS)
    land_events(root / "landing", "0.json", ['{"order_id": "a", "amount": 1}'])
    first = cli("run", "-m", "m", "-p", root)
    assert first.exit_code == 0, first.output + first.stderr
    land_events(
        root / "landing",
        "1.json",
        ['{"order_id": "b", "amount": 2, "priority": "high"}', '{"order_id": "c", "amount": '],
    )
    before = state(root)

    failed = cli("run", "-m", "m", "-p", root)

    assert failed.exit_code == 1, failed.output + failed.stderr
    line = failed.stderr.splitlines()[0]
    assert re.fullmatch(
        rf"error: {re.escape(str(root / 'models' / 'm.sql'))}:3: schema drift in the batch for "
        r"bad\.orders \(schema_drift='fail'\): new field\(s\) in the input, not in the "
        r"stream's schema: priority STRING",
        line,
    ), line
    assert "Traceback" not in failed.stderr
    assert state(root) == before

    (root / "models" / "m.sql").write_text(MODEL.format(schema=SCHEMA, policy="append_new_columns"))
    fixed = cli("run", "-m", "m", "-p", root)
    assert fixed.exit_code == 0, fixed.output + fixed.stderr
    assert "1 rows in, 1 quarantined, 1 with rescued fields" in fixed.output
    rows = {r["order_id"]: r["priority"] for r in spark.table("bad.orders").collect()}
    assert rows == {"a": None, "b": "high"}
    quarantine = spark.read.format("delta").load(
        str(root / "target" / "warehouse" / "_quarantine" / "m")
    )
    assert [(r["position"], r["reason"]) for r in quarantine.collect()] == [
        ("landing/1.json:2", "invalid JSON")
    ]
