"""The bad-input suite, pure half: one mistake at a time in a copy of the example project
(YAML, config(), Jinja, streams incl. Kafka, seeds, test YAML, selection, a busy checkpoint).

Each case asserts the exit code (2 before Spark runs; 1 for a busy checkpoint), the one-line
message with file:line (the line found by a marker in the mutated file), no traceback, and that
the project's state (target tables, quarantine, checkpoints) is byte for byte as before. No JVM:
every one of these is found before Spark starts.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.cli.app import app

RUN = ("run", "--model", "orders_merge")


@dataclass(frozen=True)
class Case:
    id: str
    file: str  # relative to the project
    find: str  # text to replace ("" appends)
    replace: str
    message: str  # a regex the first error line must match (after "file:line: ")
    marker: str | None = None  # the faulty line contains it (None: no location expected)
    command: tuple[str, ...] = RUN
    code: int = 2


CASES = [
    # -- project.yml -------------------------------------------------------------------------
    Case("project-unknown-key", "project.yml", "default_target: local",
         "default_target: local\ntigger: 5", r"project\.yml: unknown key 'tigger'", "tigger:"),
    Case("target-typo", "project.yml", "    warehouse: target", "    warehous: target",
         r"target 'local': unknown key 'warehous' \(did you mean 'warehouse'\?\)", "warehous:"),
    Case("project-duplicate-key", "project.yml", "default_target: local",
         "default_target: local\nname: again", r"duplicate key 'name' \(first at line 2\)",
         "name: again"),
    Case("project-invalid-yaml", "project.yml", "  delete_op: D", "  delete_op: [D",
         r"invalid YAML", None),
    Case("paths-unknown-key", "project.yml", "  seeds: seeds",
         "  seeds: seeds\n  snapshots: snapshots",
         r"paths: unknown key 'snapshots'", "snapshots: snapshots"),
    Case("lint-unknown-key", "project.yml", "", "lint:\n  ignore: [DL009]\n",
         r"lint: unknown key 'ignore'", "ignore:"),
    Case("unknown-target", "project.yml", "default_target: local", "default_target: prod",
         r"no target named 'prod' in project\.yml", "default_target:"),
    # -- streams -----------------------------------------------------------------------------
    Case("stream-typo", "streams/orders.yml", "    trigger:", "    tigger:",
         r"stream 'orders' \(json\): unknown key 'tigger' \(did you mean 'trigger'\?\)",
         "tigger:"),
    Case("stream-duplicate-key", "streams/orders.yml", "    format: json",
         "    format: json\n    format: csv", r"duplicate key 'format' \(first at line 4\)",
         "format: csv"),
    Case("stream-unknown-format", "streams/orders.yml", "format: json", "format: jsonl",
         r"stream 'orders': format must be one of", "format: jsonl"),
    Case("stream-no-schema", "streams/orders.yml", "    schema: >-", "    scheme: >-",
         r"unknown key 'scheme' \(did you mean 'schema'\?\)", "scheme:"),
    Case("stream-bad-trigger", "streams/orders.yml", "      processing_time: 5 seconds",
         "      every: 5 seconds", r"trigger must be 'available_now'", "trigger:"),
    Case("stream-trigger-interval", "streams/orders.yml", "processing_time: 5 seconds",
         "processing_time: soon", r"trigger processing_time 'soon': expected '<number> <unit>'",
         "processing_time:", command=("stream", "--model", "orders_merge")),
    Case("stream-trigger-months", "streams/orders.yml", "processing_time: 5 seconds",
         "processing_time: 1 month", r"cannot be in months or years", "processing_time:",
         command=("lint",)),
    Case("stream-schema-type", "streams/orders.yml", "op STRING", "op BIGINTT",
         r"schema: column op: unknown type 'BIGINTT' \(did you mean BIGINT\?\)", "schema:",
         command=("compile",)),
    Case("stream-schema-decimal", "streams/orders.yml", "DECIMAL(10,2)", "DECIMAL(40,2)",
         r"column amount: DECIMAL\(40, 2\): precision must be 1 to 38", "schema:",
         command=("lint",)),
    Case("stream-option-template", "streams/orders.yml", "maxFilesPerTrigger: 1",
         "maxFilesPerTrigger: \"{{ var('n') }}\"",
         r"option maxFilesPerTrigger: the only template allowed here is", "maxFilesPerTrigger:",
         command=("compile",)),
    Case("stream-path-template", "streams/orders.yml", "path: target/landing/orders",
         "path: \"{{ env_var('LANDING') }}/orders\"",
         r"path: templates such as env_var\(\) are not allowed in a path", "path:"),
    Case("stream-top-level-typo", "streams/orders.yml", "streams:", "stream:",
         r"orders\.yml: unknown key 'stream' \(did you mean 'streams'\?\)", "stream:"),
    Case("kafka-typo", "streams/orders_kafka.yml", "max_offsets_per_trigger:",
         "max_offset_per_trigger:",
         r"unknown key 'max_offset_per_trigger' \(did you mean 'max_offsets_per_trigger'\?\)",
         "max_offset_per_trigger:"),
    Case("kafka-value-typo", "streams/orders_kafka.yml", "      required:", "      requried:",
         r"value: unknown key 'requried' \(did you mean 'required'\?\)", "requried:"),
    Case("kafka-no-servers", "streams/orders_kafka.yml", "    bootstrap_servers: localhost:9092\n",
         "", r"a kafka source needs 'bootstrap_servers'", "format: kafka"),
    Case("kafka-value-type", "streams/orders_kafka.yml", "op STRING", "op STRNG",
         r"value\.schema: column op: unknown type 'STRNG' \(did you mean STRING\?\)", "schema:"),
    Case("kafka-two-subscriptions", "streams/orders_kafka.yml", "    topic: orders",
         "    topic: orders\n    pattern: ord.*", r"exactly one of 'topic', 'topics' or 'pattern'",
         "pattern:"),
    Case("target-env-var-path", "project.yml", "    warehouse: target",
         "    warehouse: data-{{ env_var('DATA_ROOT') }}/target",
         r"warehouse: templates such as env_var\(\) are not allowed in a path", "warehouse:",
         command=("compile",)),
    # -- config() ----------------------------------------------------------------------------
    Case("config-two-writers", "models/orders_merge.sql", "target='silver.orders'",
         "target='silver.orders_from_kafka'",
         r"models orders_kafka_merge \(models/orders_kafka_merge\.sql:3\) and orders_merge both "
         r"write silver\.orders_from_kafka", "target=", command=("lint",)),
    Case("config-two-writers-compile", "models/orders_merge.sql", "target='silver.orders'",
         "target='silver.orders_from_kafka', shared_target=true",
         r"models orders_kafka_merge .* and orders_merge both write", "target=",
         command=("compile",)),
    Case("config-columns-type", "models/orders_merge.sql", "amount DECIMAL(10,2), updated_at",
         "amount DECIMAL(10,2), updated_at TIMESTAMPP",
         r"columns: column updated_at: unknown type 'TIMESTAMPP' \(did you mean TIMESTAMP\?\)",
         "columns=", command=("compile",)),
    Case("config-env-var-target", "models/orders_merge.sql", "target='silver.orders'",
         "target=env_var('TARGET_SCHEMA', 'silver') ~ '.orders'",
         r"config\(target=\.\.\.\): a value from env_var\(\) is a secret", "target="),
    Case("config-shared-target-not-bool", "models/orders_merge.sql", "    optimize_every=2,",
         "    optimize_every=2,\n    shared_target='yes',",
         r"config key 'shared_target' must be true or false", "shared_target="),
    Case("config-unknown-key", "models/orders_merge.sql", "    optimize_every=2,",
         "    optimise_every=2,",
         r"unknown config key\(s\) optimise_every in config\(\) \(did you mean 'optimize_every'",
         "optimise_every"),
    Case("config-bad-drift", "models/orders_merge.sql", "    optimize_every=2,",
         "    optimize_every=2,\n    schema_drift='sometimes',", r"schema_drift must be one of",
         "schema_drift="),
    Case("config-zero-optimize", "models/orders_merge.sql", "optimize_every=2",
         "optimize_every=0", r"optimize_every must be a positive integer", "optimize_every="),
    Case("config-no-such-stream", "models/orders_merge.sql", "stream='orders'",
         "stream='ordres'", r"config\(stream='ordres'\): no such stream", "stream="),
    Case("config-bad-target", "models/orders_merge.sql", "target='silver.orders'",
         "target='a.b.c'", r"table name must be 'schema\.table'", "target="),
    Case("config-partition-and-cluster", "models/orders_merge.sql", "    optimize_every=2,",
         "    partitioned_by=['status'],\n    cluster_by=['order_id'],",
         r"both partitioned_by and cluster_by", "cluster_by="),
    Case("config-missing", "models/orders_merge.sql", "{{ config(", "{{ configure(",
         r"undefined name in template|'configure' is undefined", "configure("),
    # -- Jinja -------------------------------------------------------------------------------
    Case("jinja-syntax", "models/orders_merge.sql", "MERGE INTO", "{% if %}\nMERGE INTO",
         r"Jinja syntax error", "{% if %}"),
    Case("jinja-undefined", "models/orders_merge.sql", "USING orders_latest AS s",
         "USING {{ orders_latst }} AS s", r"undefined name in template", "orders_latst"),
    Case("jinja-unclosed-block", "models/orders_merge.sql", "MERGE INTO",
         "{% if true %}\nMERGE INTO", r"Jinja syntax error", None),
    # -- seeds and test YAML -----------------------------------------------------------------
    Case("seed-typo", "seeds/seeds.yml", "    header: true", "    headers: true",
         r"seed 'customers': unknown key 'headers' \(did you mean 'header'\?\)", "headers:",
         command=("seed",)),
    Case("test-yaml-typo", "models/unit_tests.yml", "    description: two events",
         "    descripton: two events",
         r"unknown key 'descripton' \(did you mean 'description'\?\)", "descripton:",
         command=("test", "--show-sql")),
    Case("test-yaml-top-level", "models/schema.yml", "models:", "model:",
         r"schema\.yml: unknown key 'model' \(did you mean 'models'\?\)", "model:",
         command=("test", "--show-sql")),
    # -- selection ---------------------------------------------------------------------------
    Case("model-unknown", "project.yml", "", "", r"--model orders_mrege: no model named",
         None, command=("run", "--model", "orders_mrege")),
    Case("select-unknown-tag", "project.yml", "", "", r"--select tag:nope: no model has tag",
         None, command=("run", "--select", "tag:nope")),
    Case("nothing-selected", "project.yml", "", "", r"name the models to run", None,
         command=("run",)),
    Case("bad-vars", "project.yml", "", "", r"--vars", None,
         command=("run", "--model", "orders_merge", "--vars", "{a: [")),
]  # fmt: skip


def state_of(root: Path) -> dict[str, bytes]:
    """Every file under target/ (tables, quarantine, checkpoints) with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.glob("target/**/*"))
        if p.is_file()
    }


def seed_state(root: Path) -> None:
    """Stand-ins for a project that ran before: a target, a quarantine, a checkpoint."""
    base = root / "target" / "local"
    for relative, content in {
        "warehouse/silver/orders/_delta_log/00000000000000000000.json": b'{"commitInfo":{}}\n',
        "warehouse/_quarantine/orders_merge/part-0.parquet": b"PAR1",
        "checkpoints/orders_merge/offsets/0": b"v1\n{}\n",
        "checkpoints/orders_merge/commits/0": b"v1\n{}\n",
    }.items():
        path = base / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def mutate(root: Path, case: Case) -> int | None:
    path = root / case.file
    text = path.read_text()
    if case.find:
        assert case.find in text, f"{case.id}: {case.find!r} not in {case.file}"
        text = text.replace(case.find, case.replace, 1)
    else:
        text += case.replace
    path.write_text(text)
    if case.marker is None:
        return None
    return next(n for n, line in enumerate(text.splitlines(), 1) if case.marker in line)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_located_line_and_touches_nothing(example_project: Path, case: Case):
    seed_state(example_project)
    line = mutate(example_project, case)
    before = state_of(example_project)

    result = CliRunner().invoke(app, [*case.command, "--project-dir", str(example_project)])

    assert result.exit_code == case.code, result.output + result.stderr
    first = result.stderr.splitlines()[0]
    location = ""
    if line is not None:
        location = re.escape(f"{example_project / case.file}:{line}: ")
    elif case.file != "project.yml" or case.find:
        location = re.escape(str(example_project / case.file)) + r"(:\d+)?: "
    assert re.match(rf"error: {location}.*{case.message}", first), first
    assert "Traceback" not in result.stderr
    assert state_of(example_project) == before


def test_the_suite_has_at_least_thirty_cases() -> None:
    assert len(CASES) >= 30


# -- one run per checkpoint ------------------------------------------------------------------

HOLD = """
import sys, time
from pathlib import Path
from runner.checkpoint_lock import CheckpointLocks
locks = CheckpointLocks()
locks.acquire(Path(sys.argv[1]), "orders_merge")
print("locked", flush=True)
time.sleep(120)
"""


def hold_lock(checkpoints: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(checkpoints)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def test_a_second_run_on_a_busy_checkpoint_stops_at_once_naming_the_holder(
    example_project: Path,
) -> None:
    seed_state(example_project)
    checkpoints = example_project / "target" / "local" / "checkpoints"
    holder = hold_lock(checkpoints)
    try:
        before = state_of(example_project)
        result = CliRunner().invoke(app, [*RUN, "--project-dir", str(example_project)])
        assert result.exit_code == 1, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr  # one line, no stack trace
        assert re.match(
            rf"error: model 'orders_merge' is already running on checkpoint \S+: "
            rf"pid {holder.pid} on \S+ since \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC; stop that run",
            lines[0],
        ), lines[0]
        assert state_of(example_project) == before
    finally:
        os.kill(holder.pid, signal.SIGKILL)  # as a crash would: the kernel drops the lock
        holder.wait()

    from runner.checkpoint_lock import CheckpointLocks

    with CheckpointLocks() as locks:  # the dead holder's lock (its file remains) is free
        locks.acquire(checkpoints, "orders_merge")
        assert "orders_merge.lock" in os.listdir(checkpoints)


def test_a_stream_column_that_columns_leaves_out_is_reported(example_project: Path) -> None:
    from runner.project import load
    from runner.stream_columns import new_unmapped_columns

    project = load(example_project)
    assert new_unmapped_columns(project, project.model("orders_merge")) is None  # recorded
    streams = example_project / "streams" / "orders.yml"
    streams.write_text(streams.read_text().replace("op STRING", "op STRING, priority STRING"))
    project = load(example_project)

    warning = new_unmapped_columns(project, project.model("orders_merge"))

    model_file = example_project / "models" / "orders_merge.sql"
    line = next(n for n, t in enumerate(model_file.read_text().splitlines(), 1) if "columns=" in t)
    assert warning == (
        f"{model_file}:{line}: stream 'orders' declares new column(s) priority that "
        "config(columns=...) of model 'orders_merge' leaves out of silver.orders: add them to "
        "columns= to keep them"
    )
    assert new_unmapped_columns(project, project.model("orders_merge")) is None  # said once
