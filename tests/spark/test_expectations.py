"""Row expectations on real Delta, through run_batch: warn counts, drop leaves rows out,
quarantine writes them (exactly once across a replay), fail stops the batch before any write;
and through `runner run` / `runner history`: each batch's counts per expectation."""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from runner import project as project_loader
from runner.cli.progress import console
from runner.project import Project
from runner.spark.batch.expectations import ExpectationFailed
from runner.spark.batch.run import run_batch
from runner.spark.delta.targets import ensure_target, reset_model
from runner.spark.sources.quarantine import quarantine_table
from tests.conftest import land_events, write_project
from tests.spark.test_merge_properties import PROPERTY_SETTINGS

SCHEMA = "id BIGINT, seq BIGINT, v STRING, op STRING"
STREAMS = (
    f'streams:\n  events:\n    format: json\n    path: landing/events\n    schema: "{SCHEMA}"\n'
)
CHECKED = """{{ config(stream='events', target='expect.checked', unique_key='id',
          sequence_by='seq', columns='id BIGINT, seq BIGINT, v STRING',
          expectations={
            'has_v': 'v IS NOT NULL',
            'positive_seq': {'expect': 'seq > 0', 'on_violation': 'drop'},
            'known_v': {'expect': "v IN ('a', 'b')", 'on_violation': 'quarantine'},
          }) }}
{{ merge(delete_column='op') }};
"""
STRICT = """{{ config(stream='events', target='expect.strict', unique_key='id',
          sequence_by='seq', columns='id BIGINT, seq BIGINT, v STRING',
          expectations={'has_id': {'expect': 'id IS NOT NULL', 'on_violation': 'fail'}}) }}
{{ merge(delete_column='op') }};
"""
Event = tuple[int | None, int, str | None, str]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    root = tmp_path_factory.mktemp("expect") / "project"
    write_project(root, {"checked": CHECKED, "strict": STRICT}, streams=STREAMS)
    return project_loader.load(root)


def fresh(spark: SparkSession, project: Project, name: str):
    """An empty target (the quarantine table is kept, as --full-refresh keeps it)."""
    model = project.model(name)
    reset_model(spark, project, model)
    ensure_target(spark, project, model)
    return model


def quarantined(spark: SparkSession, name: str) -> list[tuple]:
    if not spark.catalog.tableExists(quarantine_table(name)):
        return []
    rows = spark.table(quarantine_table(name)).where("source = 'expectation'")
    return sorted(
        (r["batch_id"], r["raw"], r["reason"])
        for r in rows.select("batch_id", "raw", "reason").collect()
    )


def failed_names(event: Event) -> list[str]:
    _, seq, v, _ = event
    names = []
    if v is None:
        names.append("has_v")
    if not seq > 0:
        names.append("positive_seq")
    if v not in ("a", "b"):
        names.append("known_v")
    return names


events = st.lists(
    st.tuples(
        st.integers(0, 3), st.integers(-1, 6), st.sampled_from(["a", "b", "c", None]), st.just("U")
    ),
    min_size=1,
    max_size=8,
    unique_by=lambda e: (e[0], e[1]),
)


# each example runs a batch twice (the replay): 3 examples by default, 20 with --slow
@settings(PROPERTY_SETTINGS, max_examples=max(3, settings.default.max_examples // 3))
@given(batch=events)
def test_warn_drop_and_quarantine_match_an_oracle(
    spark: SparkSession, project: Project, batch: list[Event]
) -> None:
    model = fresh(spark, project, "checked")
    before = Counter(quarantined(spark, "checked"))
    query_id = str(uuid.uuid4())
    report = run_batch(project, model, spark.createDataFrame(batch, SCHEMA), 0, query_id=query_id)

    kept = [e for e in batch if not {"positive_seq", "known_v"} & set(failed_names(e))]
    newest: dict[int, Event] = {}
    for e in kept:
        if e[0] not in newest or e[1] > newest[e[0]][1]:
            newest[e[0]] = e  # type: ignore[index]
    target = sorted(tuple(r) for r in spark.table("expect.checked").collect())
    assert target == sorted((k, s, v) for k, s, v, _ in newest.values())

    counts = {e.name: (e.failed, e.action) for e in report.expectations}
    # the batch's own counts are rows: one failing both known_v and positive_seq is quarantined
    assert report.quarantined == sum("known_v" in failed_names(e) for e in batch)
    assert report.dropped == sum(failed_names(e)[-1:] == ["positive_seq"] for e in batch)
    for name, action in (("has_v", "warn"), ("positive_seq", "drop"), ("known_v", "quarantine")):
        assert counts[name] == (sum(name in failed_names(e) for e in batch), action)

    expected = sorted(
        (0, f'{{"id":{i},"seq":{s}' + (f',"v":"{v}"' if v else "") + ',"op":"U"}',
         "failed expectation(s): " + ", ".join(failed_names((i, s, v, op))))
        for i, s, v, op in batch
        if "known_v" in failed_names((i, s, v, op))
    )  # fmt: skip
    assert sorted((Counter(quarantined(spark, "checked")) - before).elements()) == expected
    # a replay of the batch (a crash after its writes) neither loses nor doubles a row
    run_batch(project, model, spark.createDataFrame(batch, SCHEMA), 0, query_id=query_id)
    assert sorted((Counter(quarantined(spark, "checked")) - before).elements()) == expected


def test_fail_stops_the_batch_before_any_write(spark: SparkSession, project: Project) -> None:
    model = fresh(spark, project, "strict")
    batch = [(1, 1, "a", "U"), (None, 2, "b", "U"), (2, 3, "c", "U")]
    with pytest.raises(ExpectationFailed) as error:
        run_batch(project, model, spark.createDataFrame(batch, SCHEMA), 0, query_id="q")
    message = str(error.value)
    assert "expectation 'has_id' (id IS NOT NULL) failed for 1 of 3 rows of batch 0" in message
    assert "id=None, seq=2, v='b'" in message  # the sample rows
    assert error.value.file == model.file and error.value.line == 3
    assert spark.table("expect.strict").count() == 0
    assert quarantined(spark, "strict") == []  # nothing written, not even to the quarantine


HISTORY_STREAMS = STREAMS + "    options:\n      maxFilesPerTrigger: 1\n"
# (file, events): each file one batch
HISTORY_FILES = [
    ("0.json", ['{"id":1,"seq":1,"v":"a","op":"U"}', '{"id":2,"seq":1,"v":"c","op":"U"}',
                '{"id":3,"seq":0,"v":"b","op":"U"}']),
    ("1.json", ['{"id":1,"seq":2,"v":"b","op":"U"}', '{"id":4,"seq":1,"op":"U"}']),
    ("2.json", ['{"id":5,"seq":1,"v":"a","op":"U"}']),
]  # fmt: skip


def test_history_shows_each_batchs_expectation_counts(
    spark: SparkSession, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`runner run` over three files, then `runner history`: per batch, each expectation's
    passed and failed rows (JSON), and the failing ones in the table's expectations column."""
    model = CHECKED.replace("expect.checked", "expect.history")
    root = write_project(tmp_path / "p", {"checked": model}, streams=HISTORY_STREAMS)
    for name, lines in HISTORY_FILES:
        land_events(root / "landing" / "events", name, lines)
    run = cli("run", "-m", "checked", "-p", root)
    assert run.exit_code == 0, run.output + run.stderr
    assert (
        "checked batch 0: 3 rows in, 1 quarantined, 1 dropped (expectations failed: "
        "positive_seq 1 drop, known_v 1 quarantine)" in run.output
    )

    result = cli("history", "-m", "checked", "-p", root, "--format", "json")

    assert result.exit_code == 0, result.output
    batches = json.loads(result.output)
    counts = {
        b["batch_id"]: [(e["name"], e["passed"], e["failed"]) for e in b["expectations"]]
        for b in batches
    }
    assert counts == {
        0: [("has_v", 3, 0), ("positive_seq", 2, 1), ("known_v", 2, 1)],
        1: [("has_v", 1, 1), ("positive_seq", 2, 0), ("known_v", 1, 1)],
        2: [("has_v", 1, 0), ("positive_seq", 1, 0), ("known_v", 1, 0)],
    }
    actions = {(e["name"], e["action"]) for b in batches for e in b["expectations"]}
    assert actions == {("has_v", "warn"), ("positive_seq", "drop"), ("known_v", "quarantine")}
    monkeypatch.setattr(console, "width", 240)  # one table line per batch
    table = cli("history", "-m", "checked", "-p", root).output
    rows = {line.split("│")[1].strip(): line.split("│")[-2].strip() for line in table.splitlines()
            if re.match(r"│ +\d+ │", line)}  # fmt: skip
    assert rows == {
        "0": "positive_seq 1/3 drop known_v 1/3 quarantine",
        "1": "has_v 1/2 warn known_v 1/2 quarantine",
        "2": "3 passed",
    }
    assert sorted(r["id"] for r in spark.table("expect.history").collect()) == [1, 5]


TWICE = """{{ config(stream='events', target='expect.twice', unique_key='id',
          sequence_by='seq', columns='id BIGINT, seq BIGINT, v STRING',
          expectations={
            'known_v': {'expect': "v IN ('a', 'b')", 'on_violation': 'quarantine'},
            'small_id': {'expect': 'id < 10', 'on_violation': 'quarantine'},
            'positive_seq': {'expect': 'seq > 0', 'on_violation': 'drop'},
            'even_seq': {'expect': 'seq % 2 = 0', 'on_violation': 'drop'},
          }) }}
{{ merge(delete_column='op') }};
"""


def test_quarantined_and_dropped_counts_are_rows_not_failed_expectations(
    spark: SparkSession, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row failing two 'quarantine' expectations is one row quarantined, a row failing two
    'drop' expectations one row dropped, and a row failing one of each is quarantined only:
    in the progress line, the event log and `runner history`."""
    root = write_project(tmp_path / "p", {"twice": TWICE}, streams=STREAMS)
    lines = [
        '{"id": 1, "seq": 2, "v": "a", "op": "U"}',  # kept
        '{"id": 11, "seq": 2, "v": "c", "op": "U"}',  # known_v + small_id: 1 quarantined
        '{"id": 2, "seq": -1, "v": "a", "op": "U"}',  # positive_seq + even_seq: 1 dropped
        '{"id": 12, "seq": -1, "v": "b", "op": "U"}',  # small_id + both drops: quarantined
    ]
    land_events(root / "landing" / "events", "0.json", lines)

    run = cli("run", "-m", "twice", "-p", root)

    assert run.exit_code == 0, run.output + run.stderr
    assert (
        "twice batch 0: 4 rows in, 2 quarantined, 1 dropped (expectations failed: known_v 1 "
        "quarantine, small_id 2 quarantine, positive_seq 2 drop, even_seq 2 drop)" in run.output
    )
    assert [r["id"] for r in spark.table("expect.twice").collect()] == [1]
    assert len(quarantined(spark, "twice")) == 2
    history = json.loads(cli("history", "-m", "twice", "-p", root, "--format", "json").output)
    assert [(b["quarantined"], b["dropped"]) for b in history] == [(2, 1)]
    monkeypatch.setattr(console, "width", 240)
    table = cli("history", "-m", "twice", "-p", root).output
    header = next(line for line in table.splitlines() if "quar" in line)
    row = next(line for line in table.splitlines() if re.match(r"│ +0 │", line))
    cells = dict(zip(header.split("┃")[1:-1], row.split("│")[1:-1], strict=True))
    assert {k.strip(): v.strip() for k, v in cells.items() if k.strip() in ("quar", "drop")} == {
        "quar": "2",
        "drop": "1",
    }
