"""merge() and scd2() against pure-Python oracles, on real Delta, through run_batch: where
events arrive out of order for the options that need them in order.

tests/spark/test_batch_invariance.py holds every option to the rule of docs/macros/merge.md
(the same events give the same table, however batched). This module checks what the options
that keep the rule only for events in sequence order do with late events, batch by batch:
hard deletes, ``truncate_when`` and ``scd2()``'s history tracking. Hypothesis draws event
sequences (few keys, so duplicates; sequence values in random arrival order, so out-of-order;
deletes; exact duplicate events), cuts them into micro-batches and feeds each batch to
``run_batch`` (the runner's per-batch path: drift policy, measuring, rendering, idempotent
statements). The target must then equal what the oracle computes.

A Delta MERGE costs about the same for three rows as for thirty, and MERGE and scd2() treat every
key on its own: so each example draws twice the keys and events one sequence would need, and
half as many examples run (``EXAMPLES``). Per key, as many histories are tried for less Spark work.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession

from runner import project as project_loader
from runner.project import Project
from runner.spark.batch.run import run_batch
from runner.spark.delta.targets import ensure_target, reset_model
from tests.conftest import write_project

EVENTS_SCHEMA = "id BIGINT, seq BIGINT, v STRING, op STRING"
STREAMS = (
    "streams:\n  events:\n    format: json\n    path: landing/events\n"
    f'    schema: "{EVENTS_SCHEMA}"\n'
)
MODELS = {
    "upsert_tombstone": (
        "{{ config(stream='events', target='props.upsert_tombstone', unique_key='id', "
        "sequence_by='seq', prune_by=['id'], "
        "columns='id BIGINT, seq BIGINT, v STRING, is_deleted BOOLEAN') }}\n"
        "{{ merge(delete_column='op', deletes='tombstone') }};\n"
    ),
    "upsert_hard": (
        "{{ config(stream='events', target='props.upsert_hard', unique_key='id', "
        "sequence_by='seq', prune_by=['id'], columns='id BIGINT, seq BIGINT, v STRING') }}\n"
        "{{ merge(delete_column='op') }};\n"
    ),
    "history": (
        "{{ config(stream='events', target='props.history', unique_key='id', sequence_by='seq', "
        "prune_by=['id'], columns='id BIGINT, seq BIGINT, v STRING, valid_from BIGINT, "
        "valid_to BIGINT, is_current BOOLEAN, is_deleted BOOLEAN') }}\n"
        "{{ scd2(delete_column='op') }};\n"
    ),
}
# Half the profile's examples (tests/conftest.py: 4 by default, 60 with --slow), each carrying the
# keys of two.
EXAMPLES = max(2, settings.default.max_examples // 2)
PROPERTY_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
EXAMPLES_RUN: dict[str, int] = {}

Event = tuple[int, int, str, str]  # id, seq, v, op


@st.composite
def batched_events(draw: st.DrawFn) -> list[list[Event]]:
    """Events of keys 0..7 with sequence values unique per key, arriving in random order, some
    delivered twice, cut into 1-4 micro-batches."""
    shapes = draw(
        st.lists(
            st.tuples(st.integers(0, 7), st.sampled_from("abc"), st.sampled_from("UUUD")),
            min_size=1,
            max_size=20,
        )
    )
    seqs = draw(st.permutations(range(1, len(shapes) + 1)))
    events = [(key, seq, v, op) for (key, v, op), seq in zip(shapes, seqs, strict=True)]
    for original in draw(st.lists(st.sampled_from(list(events)), max_size=6)):
        events.insert(draw(st.integers(0, len(events))), original)  # an exact redelivery
    cuts = sorted(draw(st.sets(st.integers(1, max(len(events) - 1, 1)), max_size=3)))
    bounds = [0, *[c for c in cuts if c < len(events)], len(events)]
    return [events[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


# -- oracles -------------------------------------------------------------------------------


def newest_per_key(events: list[Event]) -> dict[int, Event]:
    newest: dict[int, Event] = {}
    for event in events:
        if event[0] not in newest or event[1] > newest[event[0]][1]:
            newest[event[0]] = event
    return newest


def oracle_hard_deletes(batches: list[list[Event]]) -> list[tuple]:
    """Hard deletes, batch by batch: a newer event replaces or deletes a row; a key without a
    row is inserted unless the event is a delete (so a late event after a delete re-inserts)."""
    table: dict[int, tuple[int, str]] = {}
    for batch in batches:
        for key, seq, v, op in newest_per_key(batch).values():
            if key in table:
                if seq > table[key][0]:
                    if op == "D":
                        del table[key]
                    else:
                        table[key] = (seq, v)
            elif op != "D":
                table[key] = (seq, v)
    return sorted((k, s, v) for k, (s, v) in table.items())


# -- the runner ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def props_project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    root = write_project(tmp_path_factory.mktemp("props") / "project", MODELS, streams=STREAMS)
    return project_loader.load(root)


@pytest.fixture(scope="module", autouse=True)
def report_examples() -> Iterator[None]:
    yield
    print(f"\nhypothesis examples run: {EXAMPLES_RUN}")


def apply_batches(
    spark: SparkSession, project: Project, model_name: str, batches: list[list], schema: str
) -> DataFrame:
    """A fresh target, every batch (rows of ``schema``) through run_batch as one query's
    batches; returns the target table."""
    model = project.model(model_name)
    reset_model(spark, project, model)
    ensure_target(spark, project, model)
    query_id = str(uuid.uuid4())
    for batch_id, rows in enumerate(batches):
        batch_df = spark.createDataFrame(rows, schema)
        # as in a stream: only the first batch after a start can be one Spark replays
        run_batch(project, model, batch_df, batch_id, query_id=query_id, may_be_replay=not batch_id)
    return spark.table(model.target_table)


def run_events(
    spark: SparkSession, project: Project, model_name: str, batches: list[list[Event]]
) -> list[tuple]:
    """A fresh target, every batch through run_batch, the target's rows sorted."""
    table = apply_batches(spark, project, model_name, batches, EVENTS_SCHEMA)
    return [tuple(r) for r in table.orderBy("id", "seq").collect()]


@PROPERTY_SETTINGS
@given(batches=batched_events())
def test_merge_with_hard_deletes_matches_batch_oracle(
    spark: SparkSession, props_project: Project, batches: list[list[Event]]
) -> None:
    EXAMPLES_RUN["hard_deletes"] = EXAMPLES_RUN.get("hard_deletes", 0) + 1
    assert run_events(spark, props_project, "upsert_hard", batches) == oracle_hard_deletes(batches)


def test_late_event_after_tombstone_does_not_resurrect_the_key(
    spark: SparkSession, props_project: Project
) -> None:
    """The documented case: with hard deletes a late, older event re-inserts a deleted key;
    with a tombstone it does not."""
    batches = [[(1, 5, "new", "U")], [(1, 7, "gone", "D")], [(1, 6, "late", "U")]]
    assert run_events(spark, props_project, "upsert_hard", batches) == [(1, 6, "late")]
    assert run_events(spark, props_project, "upsert_tombstone", batches) == [(1, 7, "gone", True)]


def test_replayed_batch_is_not_applied_twice(spark: SparkSession, props_project: Project) -> None:
    model = props_project.model("history")
    reset_model(spark, props_project, model)
    ensure_target(spark, props_project, model)
    batch = spark.createDataFrame([(1, 1, "a", "U"), (1, 2, "b", "U")], EVENTS_SCHEMA)
    run_batch(props_project, model, batch, 0, query_id="replay")
    again = run_batch(props_project, model, batch, 0, query_id="replay")
    assert [s.skipped for s in again.statements] == [True]
    rows = spark.table(model.target_table).orderBy("seq").collect()
    assert [(r["seq"], r["valid_to"], r["is_current"]) for r in rows] == [
        (1, 2, False),
        (2, None, True),
    ]


# -- the CDC options (issue #14): one stream with two sequence columns and two payloads -------

WIDE_SCHEMA = "id BIGINT, s1 BIGINT, s2 BIGINT, v STRING, w STRING, op STRING"
WIDE_MODELS = {
    "truncating": (
        "{{ config(stream='wide', target='props.truncating', unique_key='id', "
        "sequence_by=['s1', 's2'], columns='id BIGINT, s1 BIGINT, s2 BIGINT, v STRING, "
        "w STRING') }}\n"
        "{{ merge(delete_column='op', truncate_when=\"op = 'T'\") }};\n"
    ),
    "tracked": (
        "{{ config(stream='wide', target='props.tracked', unique_key='id', sequence_by='s1', "
        "columns='id BIGINT, s1 BIGINT, v STRING, w STRING, valid_from BIGINT, "
        "valid_to BIGINT, is_current BOOLEAN, is_deleted BOOLEAN') }}\n"
        "{{ scd2(delete_column='op', track_history_on=['v']) }};\n"
    ),
    # the same history by exclusion: every payload column but w is tracked, so v alone
    "tracked_except": (
        "{{ config(stream='wide', target='props.tracked_except', unique_key='id', "
        "sequence_by='s1', columns='id BIGINT, s1 BIGINT, v STRING, w STRING, "
        "valid_from BIGINT, valid_to BIGINT, is_current BOOLEAN, is_deleted BOOLEAN') }}\n"
        "{{ scd2(delete_column='op', track_history_except=['w']) }};\n"
    ),
}
WIDE_STREAM = f'  wide:\n    format: json\n    path: landing/wide\n    schema: "{WIDE_SCHEMA}"\n'
Wide = tuple[int, int, int, str | None, str | None, str]  # id, s1, s2, v, w, op


@st.composite
def wide_events(draw: st.DrawFn, ops: str = "UUUD", ties: bool = True) -> list[list[Wide]]:
    """Events of keys 0..5 with (s1, s2) unique per key; s1 often ties (s2 decides), payloads
    sometimes NULL, some redelivered; cut into 1-3 micro-batches."""
    shapes = draw(
        st.lists(
            st.tuples(
                st.integers(0, 5),
                st.sampled_from(["a", "b", None]),
                st.sampled_from(["x", "y", None]),
                st.sampled_from(ops),
            ),
            min_size=1,
            max_size=18,
        )
    )
    order = draw(st.permutations(range(len(shapes))))
    events: list[Wide] = [
        (k, (i // 2 if ties else i) + 1, i % 2 if ties else 0, v, w, op)
        for (k, v, w, op), i in zip(shapes, order, strict=True)
    ]
    for original in draw(st.lists(st.sampled_from(list(events)), max_size=4)):
        events.insert(draw(st.integers(0, len(events))), original)
    cuts = sorted(draw(st.sets(st.integers(1, max(len(events) - 1, 1)), max_size=2)))
    bounds = [0, *[c for c in cuts if c < len(events)], len(events)]
    return [events[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def oracle_truncate(batches: list[list[Wide]]) -> list[tuple]:
    """Hard deletes with truncate_when: a batch with a 'T' row empties the table, then only
    its rows newer than the newest 'T' row apply."""
    table: dict[int, tuple] = {}  # id -> ((s1, s2), v, w)
    for batch in batches:
        truncates = [(e[1], e[2]) for e in batch if e[5] == "T"]
        if truncates:
            table = {}
            batch = [e for e in batch if e[5] != "T" and (e[1], e[2]) > max(truncates)]
        newest: dict[int, Wide] = {}
        for e in batch:
            if e[0] not in newest or (e[1], e[2]) > (newest[e[0]][1], newest[e[0]][2]):
                newest[e[0]] = e
        for key, e in newest.items():
            seq = (e[1], e[2])
            if key in table and seq <= table[key][0]:
                continue
            if e[5] == "D":
                table.pop(key, None)
            else:
                table[key] = (seq, e[3], e[4])
    return sorted((k, s[0], s[1], v, w) for k, (s, v, w) in table.items())


def oracle_tracked(batches: list[list[Wide]]) -> list[tuple]:
    """SCD2 tracking v only: per batch, each key's events newer than its current row, in s1
    order; a delete, a revival, a new key or a change of v starts a version (valid from its
    s1); any other event updates the current version in place (s1 and w too)."""
    history: dict[int, list[list]] = {}  # id -> [[s1, v, w, valid_from, deleted]]
    for batch in batches:
        for key in {e[0] for e in batch}:
            versions = history.setdefault(key, [])
            for s1, v, w, op in sorted({(e[1], e[3], e[4], e[5]) for e in batch if e[0] == key}):
                track_v(versions, s1, v, w, op)
    return history_rows(history)


def track_v(versions: list[list], s1: int, v: str | None, w: str | None, op: str) -> None:
    """One event applied to a key's versions ([s1, v, w, valid_from, deleted]) by scd2() with
    track_history_on=['v']: ignored unless newer than the current version; a new version for a
    delete, a revival, a new key or a change of v; else the current version updated in place."""
    current = versions[-1] if versions else None
    if current is not None and s1 <= current[0]:
        return
    if current is None or op == "D" or current[4] or current[1] != v:
        versions.append([s1, v, w, s1, op == "D"])
    else:
        current[0], current[2] = s1, w


def history_rows(history: dict[int, list[list]]) -> list[tuple]:
    """The target rows of each key's versions, each valid until the next one starts."""
    rows = []
    for key, versions in history.items():
        for i, (s1, v, w, valid_from, deleted) in enumerate(versions):
            valid_to = versions[i + 1][3] if i + 1 < len(versions) else None
            rows.append((key, s1, v, w, valid_from, valid_to, valid_to is None, deleted))
    return sorted(rows, key=lambda r: (r[0], r[4]))


@pytest.fixture(scope="module")
def wide_project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    root = write_project(
        tmp_path_factory.mktemp("wide") / "project", WIDE_MODELS, streams=STREAMS + WIDE_STREAM
    )
    return project_loader.load(root)


def run_wide(
    spark: SparkSession, project: Project, model_name: str, batches: list[list[Wide]]
) -> list[tuple]:
    table = apply_batches(spark, project, model_name, batches, WIDE_SCHEMA)
    order = ["id", "valid_from"] if "valid_from" in table.columns else ["id"]
    return [tuple(r) for r in table.orderBy(order).collect()]


@PROPERTY_SETTINGS
@given(batches=wide_events(ops="UUUDT"))
def test_merge_truncate_when_empties_the_target_then_applies_newer_rows(
    spark: SparkSession, wide_project: Project, batches: list[list[Wide]]
) -> None:
    EXAMPLES_RUN["truncate"] = EXAMPLES_RUN.get("truncate", 0) + 1
    assert run_wide(spark, wide_project, "truncating", batches) == oracle_truncate(batches)


@PROPERTY_SETTINGS
@given(batches=wide_events(ties=False))
def test_scd2_track_history_on_updates_the_current_row_in_place(
    spark: SparkSession, wide_project: Project, batches: list[list[Wide]]
) -> None:
    EXAMPLES_RUN["tracked"] = EXAMPLES_RUN.get("tracked", 0) + 1
    assert run_wide(spark, wide_project, "tracked", batches) == oracle_tracked(batches)


@PROPERTY_SETTINGS
@given(batches=wide_events(ties=False))
def test_scd2_track_history_except_tracks_every_other_column(
    spark: SparkSession, wide_project: Project, batches: list[list[Wide]]
) -> None:
    EXAMPLES_RUN["tracked_except"] = EXAMPLES_RUN.get("tracked_except", 0) + 1
    assert run_wide(spark, wide_project, "tracked_except", batches) == oracle_tracked(batches)
