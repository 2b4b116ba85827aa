"""A model's checkpoint and target must still belong together at every start
(runner/checkpoint_owner.py): a deleted target, a replaced target, a checkpoint copied from
another model and a target whose checkpoint is gone each stop the model with one line, before
anything is written; restoring, --full-refresh and --adopt-state each lead where the line says."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from pyspark.sql import SparkSession

from tests.conftest import land_events, write_project
from tests.spark.test_orders_pipeline import land_sample

MODEL = """{{{{ config(stream='orders', target='{table}', unique_key='order_id',
    columns='order_id STRING, amount DECIMAL(10,2)') }}}}
MERGE INTO {{{{ this }}}} AS t
USING (SELECT order_id, amount FROM {{{{ batch }}}}) AS s ON t.order_id = s.order_id
WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
"""


def project(root: Path, schema: str, names: tuple[str, ...] = ("a",)) -> Path:
    models = {name: MODEL.format(table=f"{schema}.{name}") for name in names}
    return write_project(root, models)


def land(root: Path, number: int, orders: list[str]) -> None:
    lines = [json.dumps({"order_id": o, "amount": number}) for o in orders]
    land_events(root / "landing" / "orders", f"{number:03d}.json", lines)


def target_dir(root: Path, schema: str, name: str = "a") -> Path:
    return root / "target" / "warehouse" / schema / name


def checkpoint(root: Path, name: str = "a") -> Path:
    return root / "target" / "checkpoints" / name


def state(root: Path) -> dict[str, bytes]:
    """Every file of the warehouse (targets, quarantine, event log) and the checkpoints, byte
    for byte. Left out: the runner's files beside each checkpoint, the lock (each start records
    who holds it) and the stream's columns (recorded before Spark starts), and
    target/run_results.json, the report of the run itself (dbt writes it for a failed run too)."""
    base = root / "target"
    beside = (".lock", ".stream_columns")
    files = [
        p
        for p in sorted(base.rglob("*"))
        if p.is_file() and p.suffix not in beside and p != base / "run_results.json"
    ]
    return {str(p.relative_to(base)): p.read_bytes() for p in files}


def orders(spark: SparkSession, location: Path) -> list[tuple[str, int]]:
    rows = spark.read.format("delta").load(str(location)).collect()
    return sorted((r["order_id"], int(r["amount"])) for r in rows)


def refused(cli, root: Path, *args: str) -> str:
    """Run a model whose state is inconsistent: exit 1, one `error:` line, nothing written.
    Returns the line."""
    before = state(root)
    result = cli("run", "-p", root, *args)
    assert result.exit_code == 1, result.output + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: model "), result.stderr
    assert "Traceback" not in result.output + result.stderr
    assert state(root) == before
    return lines[0]


def ran(cli, root: Path, *args: str) -> str:
    result = cli("run", "-p", root, *args)
    assert result.exit_code == 0, result.output + result.stderr
    return result.output


def test_a_deleted_target_stops_the_model_and_each_choice_works(
    spark: SparkSession, cli, tmp_path: Path
) -> None:
    root = project(tmp_path / "p", "ident_deleted")
    target = target_dir(root, "ident_deleted")
    land(root, 1, ["o1", "o2"])
    ran(cli, root, "-m", "a")
    record = json.loads((checkpoint(root) / "runner_owner.json").read_text())
    assert record["model"] == "a" and record["target"] == "ident_deleted.a"
    land(root, 2, ["o3"])

    # the table's directory moved away (deleted): refused; moved back (restored): all rows
    shutil.move(target, tmp_path / "backup")
    line = refused(cli, root, "-m", "a")
    assert re.fullmatch(
        rf"error: model 'a': its target ident_deleted\.a at {re.escape(str(target))} is gone, "
        rf"but its checkpoint {re.escape(str(checkpoint(root)))} has read 1 batch\(es\) of stream "
        r"'orders': running would create the table again with only new rows; choose: restore "
        r"the table's directory, --full-refresh .*, or --adopt-state .*",
        line,
    ), line
    assert not target.exists()
    shutil.move(tmp_path / "backup", target)
    ran(cli, root, "-m", "a")
    assert orders(spark, target) == [("o1", 1), ("o2", 1), ("o3", 2)]

    # deleted for good, then --adopt-state: a new table with only the rows read from now on
    shutil.rmtree(target)
    land(root, 3, ["o4"])
    refused(cli, root, "-m", "a")
    adopted = ran(cli, root, "-m", "a", "--adopt-state")
    assert "a: --adopt-state: the target is created again, empty" in adopted
    assert orders(spark, target) == [("o4", 3)]
    ran(cli, root, "-m", "a")  # the adopted state is the model's own from now on

    # deleted again: --full-refresh rebuilds it from the start of the source
    shutil.rmtree(target)
    refused(cli, root, "-m", "a")
    ran(cli, root, "-m", "a", "--full-refresh")
    assert orders(spark, target) == [("o1", 1), ("o2", 1), ("o3", 2), ("o4", 3)]


def test_a_replaced_target_stops_the_model_and_adopt_state_keeps_the_new_table(
    spark: SparkSession, cli, tmp_path: Path
) -> None:
    root = project(tmp_path / "p", "ident_replaced")
    target = target_dir(root, "ident_replaced")
    land(root, 1, ["o1"])
    ran(cli, root, "-m", "a")
    recorded = json.loads((checkpoint(root) / "runner_owner.json").read_text())["table_id"]
    shutil.rmtree(target)  # another table of the same columns at the same place
    spark.sql(f"CREATE TABLE delta.`{target}` (order_id STRING, amount DECIMAL(10,2)) USING DELTA")
    spark.sql(f"INSERT INTO delta.`{target}` VALUES ('x9', 9)")
    land(root, 2, ["o2"])

    line = refused(cli, root, "-m", "a")

    assert re.fullmatch(
        rf"error: model 'a': the Delta table at {re.escape(str(target))} \(target "
        r"ident_replaced\.a\) is not the one its checkpoint \S+ wrote to: table id \S+, "
        rf"recorded {recorded}; it was replaced; choose: restore the original table, "
        r"--full-refresh .*, or --adopt-state \(keep this table; the stream goes on from its "
        r"checkpoint\)",
        line,
    ), line
    adopted = ran(cli, root, "-m", "a", "--adopt-state")
    assert "a: --adopt-state: the stream goes on from its checkpoint" in adopted
    assert orders(spark, target) == [("o2", 2), ("x9", 9)]
    now = json.loads((checkpoint(root) / "runner_owner.json").read_text())["table_id"]
    assert now != recorded
    ran(cli, root, "-m", "a")


def test_a_checkpoint_copied_from_another_model_stops_it_and_each_choice_works(
    spark: SparkSession, cli, tmp_path: Path
) -> None:
    """a's checkpoint copied as b's and as c's (one run of a serves both): each is refused;
    --full-refresh rebuilds b from the start, --adopt-state makes c go on from where a stopped."""
    root = project(tmp_path / "p", "ident_copied", names=("a", "b", "c"))
    land(root, 1, ["o1", "o2"])
    ran(cli, root, "-m", "a")
    for name in ("b", "c"):
        shutil.copytree(checkpoint(root, "a"), checkpoint(root, name))  # a's checkpoint, as b's

    line = refused(cli, root, "-m", "b")

    assert line == (
        f"error: model 'b': its checkpoint {checkpoint(root, 'b')} belongs to model 'a' "
        "(stream 'orders', target ident_copied.a), not to model 'b' (stream 'orders', target "
        "ident_copied.b) (it was copied or moved here): running would go on from where that "
        "one stopped and skip all it read before; choose: restore this model's own "
        "checkpoint, --full-refresh (delete checkpoint and target, read the source from the "
        "start), or --adopt-state (keep it: this model goes on from there)"
    )
    assert not target_dir(root, "ident_copied", "b").exists()

    ran(cli, root, "-m", "b", "--full-refresh")
    assert orders(spark, target_dir(root, "ident_copied", "b")) == [("o1", 1), ("o2", 1)]
    owner = json.loads((checkpoint(root, "b") / "runner_owner.json").read_text())
    assert owner["model"] == "b"

    refused(cli, root, "-m", "c")
    land(root, 2, ["o2"])
    adopted = ran(cli, root, "-m", "c", "--adopt-state")
    assert "c: --adopt-state: the checkpoint is now this model's" in adopted
    assert orders(spark, target_dir(root, "ident_copied", "c")) == [("o2", 2)]


def test_a_live_target_without_its_checkpoint_stops_and_each_choice_works(
    spark: SparkSession, cli, tmp_path: Path
) -> None:
    root = project(tmp_path / "p", "ident_nockpt")
    target = target_dir(root, "ident_nockpt")
    land(root, 1, ["o1"])
    land(root, 2, ["o2"])
    ran(cli, root, "-m", "a")
    shutil.move(checkpoint(root), tmp_path / "saved")

    line = refused(cli, root, "-m", "a")

    assert line == (
        f"error: model 'a': its target ident_nockpt.a at {target} holds data but its "
        f"checkpoint {checkpoint(root)} is gone: running would read stream 'orders' again from "
        "the start into it; choose: restore the checkpoint, --full-refresh (delete the table "
        "too, rebuild from the start), or --adopt-state (keep the table; the source is read "
        "again from the start into it)"
    )
    assert not checkpoint(root).exists()

    shutil.move(tmp_path / "saved", checkpoint(root))  # restored: nothing new to read
    restored = ran(cli, root, "-m", "a")
    assert "a batch" not in restored

    shutil.rmtree(checkpoint(root))
    refused(cli, root, "-m", "a")
    adopted = ran(cli, root, "-m", "a", "--adopt-state")
    assert "a batch 0:" in adopted and "a batch 1:" in adopted  # read again from the start
    assert orders(spark, target) == [("o1", 1), ("o2", 2)]  # a MERGE: the same rows
    assert (checkpoint(root) / "runner_owner.json").is_file()


def test_a_target_another_model_created_empty_is_no_mismatch(
    spark: SparkSession, cli, example_project: Path
) -> None:
    """customer_totals reads orders_merge's Change Data Feed, so its start creates
    silver.orders (empty) when it is missing: orders_merge's first start then finds a target
    without a checkpoint, which holds nothing to lose."""
    first = cli("run", "-m", "customer_totals", "-p", example_project)
    assert first.exit_code == 0, first.output + first.stderr
    assert (example_project / "target" / "local" / "warehouse" / "silver" / "orders").is_dir()
    land_sample(example_project, ["001.json"])

    result = cli("run", "-m", "orders_merge", "-p", example_project)

    assert result.exit_code == 0, result.output + result.stderr
    assert "orders_merge batch 0: 5 rows in" in result.output
