"""`runner backfill`'s report (tables and JSON), its source-gap rule and its checkpoint
handover, without a JVM."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner, Result

from runner.backfill import (
    HANDOVER_FILE,
    BackfillPaths,
    finish_handover,
    handed_over,
    shadow_table,
    stage_handover,
)
from runner.backfill_record import (
    backfill_record,
    read_backfill_record,
    record_path,
    write_backfill_record,
)
from runner.backfill_report import (
    ApplyOutcome,
    BackfillDiff,
    RowSample,
    SourceGap,
    backfill_json,
    backfill_renderable,
    deletes_allowed,
)
from runner.checkpoint_lock import CheckpointLocks
from runner.checkpoint_owner import OwnerRecord, read_owner
from runner.cli.app import app
from runner.docs_site import site_data
from runner.last_run import read_last_run
from runner.project import load
from runner.source_retention import kafka_gap, kafka_read_range, source_gap

DIFF = BackfillDiff(
    model="orders_merge",
    live_table="silver.orders",
    shadow_table="silver.orders__backfill",
    key=("order_id",),
    live_rows=4,
    shadow_rows=4,
    only_live=1,
    only_shadow=1,
    changed=2,
    columns={"status": 2, "customer_id": 1},
    samples=(
        RowSample("only_live", {"order_id": "o7"}, {"status": "created"}, {}),
        RowSample("changed", {"order_id": "o2"}, {"status": "paid"}, {"status": "shipped"}),
    ),
    shadow_batches=5,
    compared=("customer_id", "status"),
)
NO_GAP = SourceGap(True, note="all 5 file(s) the live model read are there")
GAP = SourceGap(True, ("target/landing/orders/000.json",), "1 of the 6 file(s) ... are gone")


def shown(renderable: object) -> str:
    console = Console(width=120, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_json_carries_counts_columns_samples_and_the_apply_plan() -> None:
    document = json.loads(backfill_json(DIFF, NO_GAP, False, None))
    assert document["difference"] == {
        "only_live": 1,
        "only_shadow": 1,
        "changed": 2,
        "changed_by_column": {"customer_id": 1, "status": 2},
    }
    assert document["apply_plan"] == {"insert": 1, "update": 2, "delete": 1, "keep": 0}
    assert document["samples"][1] == {
        "kind": "changed",
        "key": {"order_id": "o2"},
        "live": {"status": "paid"},
        "shadow": {"status": "shipped"},
    }
    assert document["applied"] is None and document["shadow_batches"] == 5


@pytest.mark.parametrize(
    ("gap", "allow", "plan"),
    [
        (NO_GAP, False, {"delete": 1, "keep": 0}),
        (GAP, False, {"delete": 0, "keep": 1}),  # the source forgot: keep what it cannot rebuild
        (GAP, True, {"delete": 1, "keep": 0}),  # --allow-deletes
        (SourceGap(False, note="Kafka"), False, {"delete": 1, "keep": 0}),  # not checked
    ],
)
def test_rows_only_in_live_are_kept_only_where_the_source_has_a_gap(
    gap: SourceGap, allow: bool, plan: dict[str, int]
) -> None:
    document = json.loads(backfill_json(DIFF, gap, allow, None))
    assert {k: document["apply_plan"][k] for k in plan} == plan
    assert deletes_allowed(gap, allow) == (plan["delete"] == 1)


def test_table_names_the_counts_the_gap_and_what_apply_would_do() -> None:
    text = shown(backfill_renderable(DIFF, GAP, False, None))
    assert "silver.orders (live) vs silver.orders__backfill (shadow), by order_id" in text
    assert "status=paid" in text and "status=shipped" in text
    assert "source gap: 1 of the 6 file(s) ... are gone: target/landing/orders/000.json" in text
    assert "--apply would insert 1, update 2, keep the 1 row(s) only in live" in text


def test_table_after_an_apply_says_the_commit_and_the_handover() -> None:
    outcome = ApplyOutcome(7, False, 1, 2, 0, 1, True)
    text = shown(backfill_renderable(DIFF, GAP, False, outcome))
    assert "applied: one commit, version 7 of silver.orders: inserted 1, updated 2" in text
    assert "kept 1 row(s) only in live" in text
    assert "resumes from the shadow's position (5 batch(es) read)" in text
    assert json.loads(backfill_json(DIFF, GAP, False, outcome))["applied"]["version"] == 7


def test_shadow_sits_beside_the_live_table() -> None:
    assert shadow_table("silver.orders") == "silver.orders__backfill"


def make_checkpoint(path: Path, query_id: str, batches: int) -> None:
    (path / "offsets").mkdir(parents=True)
    (path / "metadata").write_text(json.dumps({"id": query_id}))
    for batch in range(batches):
        (path / "offsets" / str(batch)).write_text("v1\n{}\n")


def test_handover_swaps_the_shadow_checkpoint_in_and_a_rerun_finishes_it(tmp_path: Path) -> None:
    paths = BackfillPaths.of(tmp_path, "orders_merge")
    make_checkpoint(paths.live, "live-query", 3)
    make_checkpoint(paths.shadow, "shadow-query", 5)
    owner = OwnerRecord("orders_merge", "orders", "silver.orders", "/w/silver/orders", "id-1")
    record = {"model": "orders_merge", "fingerprint": "f", "sql": {}, "target": {}, "stream": {}}
    marker = {"shadow_query_id": "shadow-query"}

    stage_handover(paths, owner, record, marker)
    (paths.staged / HANDOVER_FILE).unlink()  # as if killed before the copy was complete
    stage_handover(paths, owner, record, marker)  # made again
    os_rename_killed = finish_handover  # the first rename, then a kill: the rerun finishes
    paths.live.rename(paths.replaced)
    assert os_rename_killed(paths)

    assert json.loads((paths.live / "metadata").read_text())["id"] == "shadow-query"
    assert read_owner(paths.live) is not None and read_owner(paths.live).model == "orders_merge"
    assert (read_last_run(paths.live) or {})["fingerprint"] == "f"
    assert handed_over(paths)  # the shadow's checkpoint is still there: a rerun cleans up
    assert not finish_handover(paths)  # nothing staged any more
    assert json.loads((paths.replaced / "metadata").read_text())["id"] == "live-query"


def backfill_cli(*args: str | Path) -> Result:
    return CliRunner().invoke(app, ["backfill", *(str(a) for a in args)])


def test_backfill_needs_a_unique_key_and_says_where_to_set_it(project_factory) -> None:
    root = project_factory(
        {"appended": "{{ config(stream='orders', target='silver.appended') }}\n"
         "INSERT INTO {{ this }} SELECT * FROM {{ batch }}\n"}
    )  # fmt: skip
    result = backfill_cli("-m", "appended", "-p", root)
    assert result.exit_code == 2
    assert "model 'appended' has no unique_key" in result.output
    assert "models/appended.sql:1" in result.output and "config(unique_key=...)" in result.output


def test_apply_waits_for_the_live_model_to_stop(example_project: Path) -> None:
    checkpoints = example_project / "target" / "local" / "checkpoints"
    with CheckpointLocks() as running:  # the live model's run holds its lock
        running.acquire(checkpoints, "orders_merge")
        result = backfill_cli("-m", "orders_merge", "--apply", "-p", example_project)
    assert result.exit_code == 1
    assert "model 'orders_merge' is already running on checkpoint" in result.output
    assert "stop that run first" in result.output


def test_backfill_format_and_shadow_names_are_checked_before_spark(example_project: Path) -> None:
    wrong = backfill_cli("-m", "orders_merge", "--format", "yaml", "-p", example_project)
    assert wrong.exit_code == 2 and "--format must be one of text, json" in wrong.output
    shadow = backfill_cli("-m", "orders_merge__backfill", "-p", example_project)
    assert shadow.exit_code == 2 and "no model named 'orders_merge__backfill'" in shadow.output


def test_backfill_says_it_does_not_run_over_spark_connect(example_project: Path) -> None:
    result = backfill_cli("-m", "orders_merge", "-t", "connect", "-p", example_project)
    assert result.exit_code == 2
    assert "backfill does not run over Spark Connect yet (target connect)" in result.output


def test_source_gap_of_a_delta_stream_whose_log_was_cleaned_up(example_project: Path) -> None:
    """customer_totals reads orders_merge's Change Data Feed from version 0: a log that now
    starts at version 3 lost versions 0 to 2."""
    project = load(example_project)
    log = project.target.table_location("silver.orders") / "_delta_log"
    log.mkdir(parents=True)
    for version in (3, 4):
        (log / f"{version:020d}.json").write_text("{}\n")
    checkpoint = project.target.checkpoint_for("customer_totals")
    gap = source_gap(project, project.models["customer_totals"], checkpoint)
    assert gap.checked and gap.missing == ("version 0", "version 1", "version 2")
    assert "starts at version 3, after the stream's startingVersion 0" in gap.note
    (log / f"{0:020d}.json").write_text("{}\n")
    assert not source_gap(project, project.models["customer_totals"], checkpoint).found


def test_source_gap_of_kafka_is_not_checked_and_says_so(example_project: Path) -> None:
    project = load(example_project)
    model = project.models["orders_kafka_merge"]
    gap = source_gap(project, model, project.target.checkpoint_for(model.name))
    assert not gap.checked and "Kafka retention is not checked without the broker" in gap.note
    assert not deletes_allowed(SourceGap(True, ("a",)), False)  # a gap keeps the live rows


RAN_AT = datetime(2026, 11, 25, 15, 50, 2, tzinfo=UTC)


def test_each_run_replaces_the_models_recorded_report(example_project: Path) -> None:
    project = load(example_project)
    assert read_backfill_record(project, "orders_merge") is None
    dry = write_backfill_record(project, backfill_record(DIFF, GAP, False, None, RAN_AT))
    assert dry == example_project / "target" / "backfill" / "orders_merge.json"
    recorded = read_backfill_record(project, "orders_merge")
    assert recorded is not None
    assert recorded["ran_at"] == "2026-11-25T15:50:02Z" and recorded["dry_run"] is True
    assert recorded["difference"] == json.loads(backfill_json(DIFF, GAP, False, None))["difference"]
    assert recorded["text"]["source_gap"].startswith("source gap: 1 of the 6 file(s)")
    assert "--apply would insert 1, update 2, keep the 1 row(s)" in recorded["text"]["apply"]

    outcome = ApplyOutcome(7, False, 1, 2, 0, 1, True)
    write_backfill_record(project, backfill_record(DIFF, GAP, False, outcome, RAN_AT))
    applied = read_backfill_record(project, "orders_merge") or {}
    assert applied["dry_run"] is False and applied["applied"]["version"] == 7
    assert applied["text"]["apply"].startswith("applied: one commit, version 7 of silver.orders")
    assert [p.name for p in dry.parent.iterdir()] == ["orders_merge.json"]  # no temp file left


def test_the_docs_site_data_carries_each_models_last_backfill(example_project: Path) -> None:
    project = load(example_project)
    write_backfill_record(project, backfill_record(DIFF, NO_GAP, False, None, RAN_AT))
    models = site_data(project)["models"]
    assert models["orders_merge"]["backfill"]["samples"][1]["shadow"] == {"status": "shipped"}
    assert models["customer_totals"]["backfill"] is None  # never backfilled

    record_path(project, "orders_merge").write_text("{not json")
    broken = site_data(project)["models"]["orders_merge"]["backfill"]
    assert "target/backfill/orders_merge.json does not parse" in broken["error"]
    assert "runner backfill --model orders_merge" in broken["error"]


def test_kafka_read_range_comes_from_the_initial_offsets_and_the_newest_batch(
    tmp_path: Path,
) -> None:
    """As Spark's Kafka source writes them: sources/0/0 after a zero byte (SPARK-19517), each
    offsets/<batch> after its version and metadata lines; partition 2 appeared later."""
    (tmp_path / "sources" / "0").mkdir(parents=True)
    (tmp_path / "sources" / "0" / "0").write_bytes(b'\x00v1\n{"orders":{"1":40,"0":7}}')
    (tmp_path / "offsets").mkdir()
    metadata = '{"batchWatermarkMs":0,"batchTimestampMs":1,"conf":{"a":"b"}}'
    for batch, offsets in (
        (2, '{"orders":{"1":50,"0":60}}'),
        (10, '{"orders":{"1":90,"0":80,"2":5}}'),
    ):
        (tmp_path / "offsets" / str(batch)).write_text(f"v1\n{metadata}\n{offsets}")
    start, end = kafka_read_range(tmp_path)
    assert start == {("orders", 0): 7, ("orders", 1): 40, ("orders", 2): 0}
    assert end == {("orders", 0): 80, ("orders", 1): 90, ("orders", 2): 5}


@pytest.mark.parametrize(
    ("earliest", "missing"),
    [
        ({("t", 0): 7, ("t", 1): 0}, ()),  # retention deleted nothing the target was built from
        ({("t", 0): 3, ("t", 1): 0}, ()),  # deleted only what came before the query started
        ({("t", 0): 20, ("t", 1): 0}, ("t/0 offsets 7 to 19",)),
        ({("t", 0): 99, ("t", 1): 4}, ("t/0 offsets 7 to 49", "t/1 offsets 0 to 3")),
    ],
)
def test_kafka_gap_names_the_records_retention_deleted(
    earliest: dict[tuple[str, int], int], missing: tuple[str, ...]
) -> None:
    gap = kafka_gap({("t", 0): 7, ("t", 1): 0}, {("t", 0): 50, ("t", 1): 30}, earliest)
    assert gap.checked and gap.missing == missing
    assert deletes_allowed(gap, False) == (not missing)  # a gap keeps the live rows
