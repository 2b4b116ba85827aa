"""`runner backfill` on real Spark and Delta: a buggy model's history rebuilt through the fixed
SQL, the difference reported and applied in one commit, across SIGKILLs, and with a source that
forgot some of what the live target was built from."""

from __future__ import annotations

import json
import re
import shutil
from decimal import Decimal
from pathlib import Path

from pyspark.sql import SparkSession

from runner.backfill import BackfillPaths, handover_marker
from runner.checkpoint_owner import batches_read
from runner.source_retention import FILE_SOURCE_LOG, files_read
from runner.spark.delta.delta_log import local_table_id
from tests.conftest import land_events
from tests.spark.processes import StreamProcess
from tests.spark.test_crash_recovery import table_rows
from tests.spark.test_orders_pipeline import SAMPLE, land_sample

GUARD = "WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET *"
BUG = "WHEN MATCHED THEN UPDATE SET *"  # no sequence guard: a late event overwrites a newer row
# a late event for o1 (older than all of o1's), moving it to another customer
LATE_O1 = (
    '{"order_id": "o1", "customer_id": "c9", "status": "created", "amount": 1.00, '
    '"updated_at": "2024-01-01T09:00:00", "op": "U"}'
)
# an order only the first file holds: gone from the source when that file is removed
ONLY_IN_000 = (
    '{"order_id": "o7", "customer_id": "c4", "status": "created", "amount": 3.00, '
    '"updated_at": "2024-01-01T09:30:00", "op": "U"}'
)
Row = tuple[str, str, str, Decimal, str]  # order_id, customer_id, status, amount, updated_at


def edit_model(project: Path, old: str, new: str) -> None:
    model = project / "models" / "orders_merge.sql"
    text = model.read_text()
    assert old in text
    model.write_text(text.replace(old, new))


def events_of(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines if line.strip()]


def oracle(files: list[list[str]], *, guarded: bool) -> dict[str, Row]:
    """orders_merge's table after ``files`` (one batch each): per batch the latest event per
    key; a delete applies when newer; the update applies when newer (``guarded``) or always
    (the bug); a new key is inserted unless its event deletes."""
    table: dict[str, Row] = {}
    for lines in files:
        latest: dict[str, dict] = {}
        for event in events_of(lines):
            key = event["order_id"]
            if key not in latest or event["updated_at"] > latest[key]["updated_at"]:
                latest[key] = event
        for key, event in latest.items():
            row: Row = (
                key,
                event["customer_id"],
                event["status"],
                Decimal(str(event["amount"])).quantize(Decimal("0.01")),
                event["updated_at"],
            )
            stored = table.get(key)
            newer = stored is not None and event["updated_at"] > stored[4]
            if stored is None:
                if event["op"] != "D":
                    table[key] = row
            elif newer and event["op"] == "D":
                del table[key]
            elif newer or not guarded:
                table[key] = row
    return table


def totals_oracle(orders: dict[str, Row]) -> list[tuple[str, int, Decimal]]:
    totals: dict[str, tuple[int, Decimal]] = {}
    for _, customer, _, amount, _ in orders.values():
        count, total = totals.get(customer, (0, Decimal(0)))
        totals[customer] = (count + 1, total + amount)
    return [(c, n, t.quantize(Decimal("0.01"))) for c, (n, t) in sorted(totals.items())]


def orders_table(spark: SparkSession, project: Path) -> dict[str, Row]:
    location = project / "target" / "local" / "warehouse" / "silver" / "orders"
    return {
        row[0]: (row[0], row[1], row[2], row[3], row[4].isoformat())
        for row in table_rows(spark, location, "order_id")
    }


def expected_difference(live: dict[str, Row], shadow: dict[str, Row]) -> dict:
    columns = ("customer_id", "status", "amount", "updated_at")
    changed = [k for k in live.keys() & shadow.keys() if live[k] != shadow[k]]
    by_column = {
        name: n
        for i, name in enumerate(columns, start=1)
        if (n := sum(live[k][i] != shadow[k][i] for k in changed))
    }
    return {
        "only_live": len(live.keys() - shadow.keys()),
        "only_shadow": len(shadow.keys() - live.keys()),
        "changed": len(changed),
        "changed_by_column": dict(sorted(by_column.items())),
    }


def sample_files(names: list[str]) -> list[list[str]]:
    return [(SAMPLE / name).read_text().splitlines() for name in names]


def buggy_history(project: Path) -> list[list[str]]:
    """Land the four sample files and the late o1 event, each one batch; returns the files."""
    edit_model(project, GUARD, BUG)
    streams = project / "streams" / "orders.yml"  # batches every second in `stream`
    streams.write_text(streams.read_text().replace("5 seconds", "1 second"))
    land_sample(project, ["001.json", "002.json", "003.json", "004.json"])
    land_events(project / "target" / "landing" / "orders", "005.json", [LATE_O1])
    return [*sample_files(["001.json", "002.json", "003.json", "004.json"]), [LATE_O1]]


def delta_history(spark: SparkSession, location: Path) -> list:
    history = spark.sql(f"DESCRIBE HISTORY delta.`{location}`").collect()
    return sorted(history, key=lambda row: row["version"])


def run_buggy_model(
    spark: SparkSession, cli, project: Path, select: str
) -> tuple[list[list[str]], dict[str, Row], dict[str, Row]]:
    """`runner run --select SELECT` of the buggy model over the sample history; returns the
    files and the tables the buggy and the fixed model make of them."""
    files = buggy_history(project)
    result = cli("run", "--select", select, "-p", project)
    assert result.exit_code == 0, result.output
    buggy, fixed = oracle(files, guarded=False), oracle(files, guarded=True)
    assert orders_table(spark, project) == buggy
    return files, buggy, fixed


def test_backfill_survives_sigkills_and_applies_the_oracles_difference_once(
    spark: SparkSession, cli, example_project: Path
) -> None:
    """One buggy history serves the whole backfill: a SIGKILL in the shadow build, the dry run
    (resuming that shadow) reporting the oracle's difference, SIGKILLs before and right after the
    apply's commit, then the apply run again: the difference committed exactly once, and the live
    model and what reads its Change Data Feed go on from the fixed table."""
    project = example_project
    files, buggy, fixed = run_buggy_model(spark, cli, project, "orders_merge+")
    assert buggy != fixed  # o2's late 'paid' and o1's late c9 event overwrote newer rows

    edit_model(project, BUG, GUARD)
    planned = cli("plan", "--select", "orders_merge", "--format", "json", "-p", project)
    (entry,) = json.loads(planned.stdout)["models"]
    assert (entry["status"], planned.exit_code) == ("logic", 1)

    location = project / "target" / "local" / "warehouse" / "silver" / "orders"
    table_id, versions_before = local_table_id(location), len(delta_history(spark, location))
    kill_right_after(
        project, ["backfill", "-m", "orders_merge"], r"orders_merge__backfill batch 1:"
    )
    assert orders_table(spark, project) == buggy

    dry = cli("backfill", "--model", "orders_merge", "--format", "json", "-p", project)
    assert dry.exit_code == 0, dry.output
    report = json.loads(dry.stdout)
    assert report["difference"] == expected_difference(buggy, fixed)
    assert report["source_gap"]["checked"] and report["source_gap"]["missing"] == []
    assert report["applied"] is None and orders_table(spark, project) == buggy  # a dry run
    o2 = next(s for s in report["samples"] if s["key"] == {"order_id": "o2"})
    assert (o2["live"]["status"], o2["shadow"]["status"]) == ("paid", "shipped")

    for moment in (r"applying the difference", r"committed version \d+"):
        kill_right_after(project, ["backfill", "-m", "orders_merge", "--apply"], moment)
        assert orders_table(spark, project) in (buggy, fixed)  # never anything in between

    rerun = cli("backfill", "-m", "orders_merge", "--apply", "-p", project)
    assert rerun.exit_code == 0, rerun.output
    print(rerun.output)
    assert orders_table(spark, project) == fixed
    assert local_table_id(location) == table_id
    (apply_commit,) = delta_history(spark, location)[versions_before:]  # once, whatever the kills
    assert apply_commit["operation"] == "MERGE"
    assert json.loads(apply_commit["userMetadata"])["runner"] == "backfill"

    # the live model resumes from the shadow's position: the handed-over checkpoint has read
    # every landed file, and a new file is the only thing the next run reads, as the batch after
    # the shadow's last. Five files, one a batch; but the SIGKILL in the shadow build can land
    # after Spark's file source logged its next file and before the offset log did, and then
    # the resumed query reads that file and the one after it in one batch (Spark's, not ours)
    paths = BackfillPaths.of(project / "target" / "local" / "checkpoints", "orders_merge")
    assert handover_marker(paths.live) is not None and not paths.shadow.exists()
    landed = sorted(p.name for p in (project / "target" / "landing" / "orders").glob("*.json"))
    read = sorted(Path(p).name for p in files_read(paths.live / FILE_SOURCE_LOG))
    assert read == landed and len(landed) == len(files)
    shadow_batches = batches_read(paths.live)
    assert shadow_batches in (len(files), len(files) - 1)
    totals = cli("run", "--select", "customer_totals", "-p", project)
    assert totals.exit_code == 0, totals.output
    warehouse = project / "target" / "local" / "warehouse"
    assert table_rows(spark, warehouse / "gold" / "customer_totals", "customer_id") == (
        totals_oracle(fixed)
    )
    late_o5 = LATE_O1.replace('"o1"', '"o5"')  # older than o5's row: ignored
    land_events(project / "target" / "landing" / "orders", "006.json", [late_o5])
    again = cli("run", "--select", "orders_merge", "-p", project)
    assert again.exit_code == 0, again.output
    assert re.findall(r"orders_merge batch (\d+):", again.output) == [str(shadow_batches)]
    assert orders_table(spark, project) == fixed
    plan_after = cli("plan", "--select", "orders_merge", "--format", "json", "-p", project)
    assert json.loads(plan_after.stdout)["models"][0]["status"] == "no_change"
    shutil.rmtree(project / "target" / "local" / "checkpoints" / "orders_merge__before_backfill")


def kill_right_after(project: Path, arguments: list[str], moment: str) -> None:
    """Start `runner ARGUMENTS` and SIGKILL it (and its JVM) right after it prints ``moment``."""
    process = StreamProcess(project, command=arguments)
    hit = process.wait_for(re.compile(moment), 0, timeout=300)
    assert hit is not None, "\n".join(process.lines)
    process.kill()
    print(f"SIGKILL of `runner {' '.join(arguments)}` right after: {process.lines[hit]}")


def test_backfill_keeps_live_rows_the_source_no_longer_holds(
    spark: SparkSession, cli, example_project: Path
) -> None:
    project = example_project
    landing = project / "target" / "landing" / "orders"
    land_events(landing, "000.json", [ONLY_IN_000])
    files = [[ONLY_IN_000], *buggy_history(project)]
    result = cli("run", "--select", "orders_merge", "-p", project)
    assert result.exit_code == 0, result.output
    buggy = oracle(files, guarded=False)
    assert orders_table(spark, project) == buggy

    edit_model(project, BUG, GUARD)
    (landing / "000.json").unlink()  # retention: the oldest file is gone
    rebuilt = oracle(files[1:], guarded=True)
    dry = cli("backfill", "-m", "orders_merge", "--format", "json", "-p", project)
    assert dry.exit_code == 0, dry.output
    report = json.loads(dry.stdout)
    assert report["source_gap"]["missing"] == ["target/landing/orders/000.json"]
    assert report["difference"] == expected_difference(buggy, rebuilt)
    assert report["apply_plan"]["keep"] == 1 and report["apply_plan"]["delete"] == 0

    applied = cli("backfill", "-m", "orders_merge", "--apply", "-p", project)
    assert applied.exit_code == 0, applied.output
    print(applied.output)
    assert "applied: one commit, version" in applied.output
    assert "source gap: 1 of the 6 file(s) the live model read are gone" in applied.output
    assert "kept 1 row(s) only in live" in applied.output
    assert orders_table(spark, project) == {**rebuilt, "o7": buggy["o7"]}


def run_then_move_to_a_new_path(cli, project: Path) -> list[str]:
    """Run the fixed model over three sample files, then point its stream at a new landing
    path that holds those and one file more (the whole history), read in one batch: without
    the rate limit (the sequence-guarded model's table does not depend on the batch cuts,
    tests/spark/test_batch_invariance.py; plan names only the path). Returns that path's files."""
    land_sample(project, ["001.json", "002.json", "003.json"])
    first = cli("run", "--select", "orders_merge", "-p", project)
    assert first.exit_code == 0, first.output
    streams = project / "streams" / "orders.yml"
    text = streams.read_text().replace("landing/orders\n", "landing/orders_v2\n")
    limit = "    options:\n      maxFilesPerTrigger: 1\n"
    assert limit in text
    streams.write_text(text.replace(limit, ""))
    names = ["001.json", "002.json", "003.json", "004.json"]
    for name in names:
        land_events(project / "target" / "landing" / "orders_v2", name, sample_files([name])[0])
    return names


def test_a_new_checkpoint_from_the_earliest_data_converges_for_a_replay_safe_model(
    spark: SparkSession, cli, example_project: Path
) -> None:
    """Plan's choice (b) after a source change, done as plan prints it: the sequence-guarded
    model reads the new landing path from its first file into the existing table."""
    project = example_project
    names = run_then_move_to_a_new_path(cli, project)

    planned = cli("plan", "--select", "orders_merge", "--format", "json", "-p", project)
    (change,) = json.loads(planned.stdout)["models"][0]["changes"]
    assert (change["kind"], planned.exit_code) == ("source", 1)
    assert "(b) a new checkpoint from the earliest data, safe for this model" in change["todo"]
    checkpoint = project / "target" / "local" / "checkpoints" / "orders_merge"
    assert (
        f"mv target/local/checkpoints/orders_merge {checkpoint.relative_to(project)}.old"
        in (change["todo"])
    )
    shutil.move(checkpoint, checkpoint.with_name("orders_merge.old"))
    replayed = cli("run", "--select", "orders_merge", "--adopt-state", "-p", project)
    assert replayed.exit_code == 0, replayed.output
    assert orders_table(spark, project) == oracle(sample_files(names), guarded=True)


def test_backfill_moves_a_model_to_a_new_source_path(
    spark: SparkSession, cli, example_project: Path
) -> None:
    """After a source change the shadow reads the new path from its first file; the handover
    gives the live model the new path's position, so the next file there is its next batch."""
    project = example_project
    names = run_then_move_to_a_new_path(cli, project)
    landing = project / "target" / "landing" / "orders_v2"
    before, after = (
        oracle(sample_files(names[:3]), guarded=True),
        oracle(sample_files(names), guarded=True),
    )

    applied = cli("backfill", "-m", "orders_merge", "--apply", "--format", "json", "-p", project)
    assert applied.exit_code == 0, applied.output
    report = json.loads(applied.stdout)
    assert report["difference"] == expected_difference(before, after)
    assert report["applied"]["handed_over"] and report["shadow_batches"] == 1
    assert orders_table(spark, project) == after

    land_events(landing, "005.json", [LATE_O1])
    again = cli("run", "--select", "orders_merge", "-p", project)
    assert again.exit_code == 0, again.output
    assert re.findall(r"orders_merge batch (\d+):", again.output) == ["1"]  # the shadow's one
    assert orders_table(spark, project) == after  # the late event is older: ignored
