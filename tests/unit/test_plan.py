"""`runner plan` without a JVM: each kind of change on an edited copy of the example project.

Each test records what the example's models "last ran" with the pure function the Spark half
calls at every start (runner/last_run.py), edits the copy, and reads what plan says.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from runner.cli.app import app
from runner.last_run import (
    LAST_RUN_FILE,
    fingerprint,
    model_record,
    read_last_run,
    write_last_run,
)
from runner.project import load
from runner.replay_safety import replay_safety
from runner.type_widening import widens

cli = CliRunner()


def record_runs(root: Path, *models: str, vars_text: str | None = None) -> None:
    """What the Spark half writes when ``models`` (default: all) start."""
    from runner.cli.options import parse_vars

    project = load(root, None, parse_vars(vars_text))
    for name in models or tuple(project.models):
        write_last_run(
            project.target.checkpoint_for(name), model_record(project, project.models[name])
        )


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def plan(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli.invoke(app, ["plan", "--format", "json", "-p", str(root), *args])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def the_change(root: Path, *edit_args: str, model: str) -> dict[str, Any]:
    """The one change `plan` reports for ``model`` after the last run and one edit
    (``edit_args``: the file's path parts under ``root``, then the text and its replacement);
    the model needs action (exit 1)."""
    *parts, old, new = edit_args
    record_runs(root)
    edit(root.joinpath(*parts), old, new)
    code, report = plan(root, "-s", model)
    assert code == 1
    (change,) = entry(report, model)["changes"]
    return change


def entry(report: dict[str, Any], model: str) -> dict[str, Any]:
    return next(m for m in report["models"] if m["model"] == model)


def kinds(report: dict[str, Any], model: str) -> list[tuple[str, str]]:
    return [(c["kind"], c["subject"]) for c in entry(report, model)["changes"]]


# -- the record ------------------------------------------------------------------------------


def test_record_is_stable_and_written_atomically(example_project: Path) -> None:
    project = load(example_project, None, {})
    model = project.models["orders_merge"]
    first, second = model_record(project, model), model_record(project, model)
    assert first == second
    content = {k: first[k] for k in ("sql", "target", "stream")}
    assert first["fingerprint"] == fingerprint(content)
    checkpoint = project.target.checkpoint_for("orders_merge")
    path = write_last_run(checkpoint, first)
    assert path == checkpoint / LAST_RUN_FILE
    assert [p.name for p in checkpoint.iterdir()] == [LAST_RUN_FILE]  # no temp file left
    read = read_last_run(checkpoint)
    assert read is not None and read["fingerprint"] == first["fingerprint"]
    assert read["recorded_at"].endswith("UTC")
    # what decides the model's behaviour is in it
    assert any("s.updated_at > t.updated_at" in sql for sql in first["sql"]["batch"])
    assert first["sql"]["maintenance"] == ["OPTIMIZE silver.orders ZORDER BY (customer_id)"]
    assert first["target"]["unique_key"] == ["order_id"]
    assert first["target"]["sequence_by"] == ["updated_at"]
    assert ["amount", "DECIMAL(10,2)"] in first["target"]["columns"]
    assert first["stream"]["path"] == "target/landing/orders"
    assert first["stream"]["options"] == {"maxFilesPerTrigger": "1"}


def test_record_holds_env_var_names_never_their_values(
    example_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORDERS_SECRET_OPTION", "s3cr3t-value-42")
    edit(
        example_project / "streams" / "orders.yml",
        "maxFilesPerTrigger: 1",
        "maxFilesPerTrigger: 1\n      fileNameOnly: \"{{ env_var('ORDERS_SECRET_OPTION') }}\"",
    )
    record_runs(example_project, "orders_merge")
    text = (example_project / "target/local/checkpoints/orders_merge" / LAST_RUN_FILE).read_text()
    assert "s3cr3t-value-42" not in text
    assert "env_var('ORDERS_SECRET_OPTION')" in text
    code, report = plan(example_project, "-s", "orders_merge")
    assert entry(report, "orders_merge")["status"] == "no_change" and code == 0


def test_a_damaged_record_is_an_error_naming_the_file(example_project: Path) -> None:
    checkpoint = example_project / "target/local/checkpoints/orders_merge"
    checkpoint.mkdir(parents=True)
    (checkpoint / LAST_RUN_FILE).write_text("{not json")
    result = cli.invoke(app, ["plan", "-p", str(example_project)])
    assert result.exit_code == 1
    assert LAST_RUN_FILE in result.output and "delete that one file" in result.output


# -- no change, new --------------------------------------------------------------------------


def test_never_ran_is_new_and_needs_nothing(example_project: Path) -> None:
    code, report = plan(example_project)
    assert code == 0
    assert {m["status"] for m in report["models"]} == {"new"}
    assert report["summary"] == {"models": 3, "needs_action": 0, "by_status": {"new": 3}}


def test_as_last_run_is_no_change(example_project: Path) -> None:
    record_runs(example_project)
    # a comment is no change: whole-line comments are not recorded
    edit(example_project / "models" / "orders_merge.sql", "-- Upsert", "-- Now: upsert")
    code, report = plan(example_project)
    assert code == 0
    assert [m["status"] for m in report["models"]] == ["no_change"] * 3
    one = entry(report, "orders_merge")
    assert one["fingerprint"]["last_run"] == one["fingerprint"]["now"]
    assert one["changes"] == [] and one["diff"] is None


# -- per-batch logic -------------------------------------------------------------------------


def test_sql_edit_is_a_logic_change_with_the_compiled_diff(example_project: Path) -> None:
    record_runs(example_project)
    edit(
        example_project / "models" / "orders_merge.sql",
        "WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET *",
        "WHEN MATCHED THEN UPDATE SET *",
    )
    code, report = plan(example_project)
    assert code == 1
    one = entry(report, "orders_merge")
    assert one["status"] == "logic" and one["needs_action"]
    assert kinds(report, "orders_merge") == [("logic", "per-batch SQL")]
    diff = one["diff"]
    assert diff.startswith("--- last run (")
    assert "-WHEN MATCHED AND s.updated_at > t.updated_at THEN UPDATE SET *\n" in diff
    assert "+WHEN MATCHED THEN UPDATE SET *\n" in diff
    todo = one["changes"][0]["todo"]
    assert "`runner backfill --model orders_merge` rebuilds the history" in todo
    assert "--full-refresh" in todo and "new table id" in todo
    # replay safety is judged on the model as it is now: the guard is gone
    assert one["replay_safe"] is False and "is not guarded" in one["replay_reason"]
    assert "A replay of the source is not safe for this model" in todo
    # the others did not change
    assert entry(report, "customer_totals")["status"] == "no_change"
    assert report["summary"]["needs_action"] == 1


def test_a_var_is_a_logic_change(example_project: Path) -> None:
    record_runs(example_project)
    code, report = plan(example_project, "--vars", "{delete_op: X}", "-s", "orders_merge")
    assert code == 1
    assert kinds(report, "orders_merge") == [("logic", "per-batch SQL")]
    assert (
        "+WHEN MATCHED AND s.updated_at > t.updated_at AND s.op = 'X' THEN DELETE"
        in (entry(report, "orders_merge")["diff"])
    )


def test_a_macro_is_a_logic_change(example_project: Path) -> None:
    record_runs(example_project)
    (example_project / "macros" / "dedupe.sql").write_text(
        "{% macro dedupe(relation, key, order_by, columns=none, tie_break=none) %}"
        "SELECT DISTINCT * FROM {{ relation }}{% endmacro %}\n"
    )
    code, report = plan(example_project, "-s", "orders_merge")
    assert code == 1
    assert entry(report, "orders_merge")["status"] == "logic"
    assert "+SELECT DISTINCT * FROM orders_merge__batch" in entry(report, "orders_merge")["diff"]


def test_expectations_are_a_logic_change(example_project: Path) -> None:
    record_runs(example_project)
    edit(
        example_project / "models" / "orders_merge.sql",
        "optimize_every=2,",
        "optimize_every=2, expectations={'has_customer': 'customer_id IS NOT NULL'},",
    )
    code, report = plan(example_project, "-s", "orders_merge")
    assert code == 1
    assert kinds(report, "orders_merge") == [("logic", "expectations (has_customer)")]
    assert "+-- EXPECTATIONS" in entry(report, "orders_merge")["diff"]


# -- the target ------------------------------------------------------------------------------


def test_a_new_column_is_an_addition_the_next_start_does_not_apply(example_project: Path) -> None:
    change = the_change(
        example_project,
        "models",
        "orders_merge.sql",
        "updated_at TIMESTAMP',",
        "updated_at TIMESTAMP, discount DECIMAL(10,2)',",
        model="orders_merge",
    )
    assert (change["kind"], change["subject"]) == (
        "target_addition",
        "column discount DECIMAL(10,2) added",
    )
    assert "existing rows get NULL" in change["means"]
    assert "ALTER TABLE silver.orders ADD COLUMNS (discount DECIMAL(10,2))" in change["todo"]


def test_a_new_column_with_schema_drift_needs_nothing(example_project: Path) -> None:
    edit(
        example_project / "models" / "orders_merge.sql",
        "optimize_every=2,",
        "optimize_every=2, schema_drift='append_new_columns',",
    )
    record_runs(example_project)
    edit(
        example_project / "models" / "orders_merge.sql",
        "updated_at TIMESTAMP',",
        "updated_at TIMESTAMP, discount DECIMAL(10,2)',",
    )
    code, report = plan(example_project, "-s", "orders_merge")
    assert code == 0
    (change,) = entry(report, "orders_merge")["changes"]
    assert change["kind"] == "target_addition" and not change["needs_action"]
    assert "adds it with the first batch" in change["means"]


def test_a_new_table_property_is_applied_by_the_next_start(example_project: Path) -> None:
    record_runs(example_project)
    edit(
        example_project / "models" / "orders_merge.sql",
        "{'delta.enableChangeDataFeed': 'true'}",
        "{'delta.enableChangeDataFeed': 'true', 'delta.logRetentionDuration': 'interval 60 days'}",
    )
    code, report = plan(example_project, "-s", "orders_merge")
    assert code == 0
    assert entry(report, "orders_merge")["status"] == "target_addition"
    (change,) = entry(report, "orders_merge")["changes"]
    assert change["subject"] == "table property delta.logRetentionDuration = interval 60 days added"
    assert "the next start sets it" in change["means"] and not change["needs_action"]


@pytest.mark.parametrize(
    ("old", "new", "subject"),
    [
        (
            "unique_key='order_id',",
            "unique_key=['order_id', 'customer_id'],",
            "unique_key [order_id] -> [order_id, customer_id]",
        ),
        (
            "sequence_by='updated_at',",
            "sequence_by=['updated_at', 'amount'],",
            "sequence_by [updated_at] -> [updated_at, amount]",
        ),
        (
            "optimize_every=2,",
            "optimize_every=2, partitioned_by=['status'],",
            "partitioned_by (none) -> [status]",
        ),
        (
            "amount DECIMAL(10,2), updated_at TIMESTAMP',",
            "amount DECIMAL(8,2), updated_at TIMESTAMP',",
            "column amount DECIMAL(10,2) -> DECIMAL(8,2) (does not widen)",
        ),
        (
            "status STRING, amount",
            "status INT, amount",
            "column status STRING -> INT (does not widen)",
        ),
        ("status STRING, amount", "amount", "column status STRING removed"),
    ],
)
def test_changes_that_need_a_rewrite(
    example_project: Path, old: str, new: str, subject: str
) -> None:
    record_runs(example_project)
    edit(example_project / "models" / "orders_merge.sql", old, new)
    code, report = plan(example_project, "-s", "orders_merge")
    assert code == 1
    assert ("target_rewrite", subject) in kinds(report, "orders_merge")
    assert entry(report, "orders_merge")["status"] == "target_rewrite"
    rewrite = next(c for c in entry(report, "orders_merge")["changes"] if c["subject"] == subject)
    assert "--full-refresh" in rewrite["todo"]


def test_a_type_that_widens_is_an_addition_with_its_alter(example_project: Path) -> None:
    change = the_change(
        example_project,
        "models",
        "orders_merge.sql",
        "amount DECIMAL(10,2), updated_at",
        "amount DECIMAL(12,2), updated_at",
        model="orders_merge",
    )
    assert change["subject"] == "column amount DECIMAL(10,2) -> DECIMAL(12,2) (widens)"
    assert change["kind"] == "target_addition"
    assert "'delta.enableTypeWidening' = 'true'" in change["todo"]
    assert "ALTER COLUMN amount TYPE DECIMAL(12,2)" in change["todo"]


@pytest.mark.parametrize(
    ("old", "new", "wider"),
    [
        ("INT", "BIGINT", True),
        ("TINYINT", "DOUBLE", True),
        ("BIGINT", "INT", False),
        ("BIGINT", "DOUBLE", False),
        ("FLOAT", "DOUBLE", True),
        ("INT", "DECIMAL(10,0)", True),
        ("INT", "DECIMAL(9,0)", False),
        ("DECIMAL(10,1)", "DECIMAL(12,3)", True),
        ("DECIMAL(10,1)", "DECIMAL(11,3)", False),
        ("DECIMAL(10,2)", "DECIMAL(10,2)", False),
        ("DATE", "TIMESTAMP_NTZ", True),
        ("DATE", "TIMESTAMP", False),
        ("STRING", "INT", False),
    ],
)
def test_type_widening_follows_deltas_rules(old: str, new: str, wider: bool) -> None:
    assert widens(old, new) is wider


# -- the source ------------------------------------------------------------------------------


def test_a_new_landing_path_offers_a_replay_to_a_guarded_model(example_project: Path) -> None:
    change = the_change(
        example_project,
        "streams",
        "orders.yml",
        "path: target/landing/orders",
        "path: target/landing/orders_v2",
        model="orders_merge",
    )
    assert (change["kind"], change["subject"]) == (
        "source",
        "stream path target/landing/orders -> target/landing/orders_v2",
    )
    assert "Spark does not allow" in change["means"]
    todo = change["todo"]
    assert "(a) a new checkpoint from the latest data" in todo
    assert "(b) a new checkpoint from the earliest data, safe for this model" in todo
    assert (
        "mv target/local/checkpoints/orders_merge target/local/checkpoints/orders_merge.old" in todo
    )
    assert "(c) `runner backfill --model orders_merge` rebuilds" in todo


def test_a_source_change_of_an_additive_model_does_not_offer_a_replay(
    example_project: Path,
) -> None:
    change = the_change(
        example_project,
        "streams",
        "order_changes.yml",
        "ref: orders_merge",
        "ref: orders_kafka_merge",
        model="customer_totals",
    )
    assert change["subject"] == "stream upstream table silver.orders -> silver.orders_from_kafka"
    assert (
        "(b) no new checkpoint from the earliest data: a replay is not safe for this model "
        "(additive MERGE" in (change["todo"])
    )
    assert "earliest data, safe" not in change["todo"]


def test_a_new_topic_is_a_source_change(example_project: Path) -> None:
    record_runs(example_project)
    edit(example_project / "streams" / "orders_kafka.yml", "topic: orders", "topic: orders_v2")
    code, report = plan(example_project, "-s", "orders_kafka_merge")
    assert code == 1
    assert kinds(report, "orders_kafka_merge") == [
        ("source", "option subscribe: orders -> orders_v2")
    ]


@pytest.mark.parametrize(
    ("file", "old", "new", "model", "meaning"),
    [
        (
            "orders.yml",
            "maxFilesPerTrigger: 1",
            "maxFilesPerTrigger: 2",
            "orders_merge",
            "a rate limit",
        ),
        (
            "order_changes.yml",
            "startingVersion: 0",
            "startingVersion: 3",
            "customer_totals",
            "read only when a checkpoint is new",
        ),
    ],
)
def test_options_spark_resumes_under_need_nothing(
    example_project: Path, file: str, old: str, new: str, model: str, meaning: str
) -> None:
    record_runs(example_project)
    edit(example_project / "streams" / file, old, new)
    code, report = plan(example_project, "-s", model)
    assert code == 0
    (change,) = entry(report, model)["changes"]
    assert change["kind"] == "note" and meaning in change["means"]


def test_a_stream_schema_change_is_a_logic_change(example_project: Path) -> None:
    record_runs(example_project)
    edit(example_project / "streams" / "orders.yml", "op STRING", "op STRING, channel STRING")
    code, report = plan(example_project, "-s", "orders_merge")
    assert code == 1
    assert ("logic", "stream schema") in kinds(report, "orders_merge")


# -- replay safety, output -------------------------------------------------------------------


def test_replay_safety_of_the_example_models(example_project: Path) -> None:
    project = load(example_project, None, {})
    guarded = replay_safety(project, project.models["orders_merge"])
    assert guarded.safe and "sequence-guarded upsert on 'updated_at'" in guarded.reason
    assert "until the replay reaches its delete again" in guarded.reason  # hard deletes
    totals = replay_safety(project, project.models["customer_totals"])
    assert not totals.safe
    assert totals.reason.startswith(
        "additive MERGE (t.order_count = t.order_count + s.order_delta)"
    )


def test_merge_macro_is_replay_safe(project_factory) -> None:
    root = project_factory(
        {
            "m": "{{ config(stream='orders', target='s.t', unique_key='order_id', "
            "sequence_by='updated_at') }}\n{{ merge(delete_column='op', deletes='tombstone') }}\n"
        }
    )
    # tombstones need the is_deleted column
    edit(
        root / "models" / "m.sql",
        "sequence_by='updated_at'",
        "sequence_by='updated_at', "
        "columns='order_id STRING, updated_at TIMESTAMP, is_deleted BOOLEAN'",
    )
    project = load(root, None, {})
    safety = replay_safety(project, project.models["m"])
    assert safety.safe and "delete again" not in safety.reason


def test_text_output_shows_the_table_the_diff_and_the_exit_code(example_project: Path) -> None:
    record_runs(example_project)
    edit(example_project / "models" / "orders_merge.sql", "s.op <> '", "s.op != '")
    result = cli.invoke(app, ["plan", "-p", str(example_project)], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "logic: per-batch SQL" in result.output
    assert "orders_merge: compiled per-batch SQL, last run -> now" in result.output
    assert "+WHEN NOT MATCHED AND s.op != 'D' THEN INSERT *" in result.output
    assert "customer_totals: not safe to replay: additive MERGE" in result.output
    assert "1 of 3 model(s) need action: orders_merge" in result.output


def test_usage_errors_exit_2(example_project: Path) -> None:
    assert cli.invoke(app, ["plan", "-p", str(example_project), "--format", "yaml"]).exit_code == 2
    result = cli.invoke(app, ["plan", "-p", str(example_project), "-s", "orders_mrege"])
    assert result.exit_code == 2 and "orders_mrege" in result.output


def test_plan_does_not_import_pyspark(example_project: Path) -> None:
    record_runs(example_project)
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from runner.cli.app import app\n"
        f"result = CliRunner().invoke(app, ['plan', '-p', {str(example_project)!r}])\n"
        "assert result.exit_code == 0, result.output\n"
        "assert 'no change' in result.output, result.output\n"
        "heavy = ('pyspark', 'py4j', 'delta')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
