"""The same events give the same table, however they fall into micro-batches (issue #28).

For every merge() and scd2() option the docs allow, hypothesis draws an event sequence (few
keys; struct sequences whose first column often ties; NULL payloads; deletes; truncates; exact
redeliveries), lets it arrive in a random order, and applies it three ways through ``run_batch``
(the runner's per-batch path) on real Delta: as one batch, as one batch per event, and cut at
random places. The three targets must be equal, and equal to a Python oracle that applies the
events one at a time, as the docs state the rule.

The rule holds whatever the arrival order, except where the docs name an option that needs a
key's events to arrive in sequence order (the target keeps no memory of what a late event would
have changed): hard deletes (an event older than a delete must not arrive after it),
``ignore_null_updates``, ``truncate_when`` and ``scd2()``'s ``track_history_on`` /
``track_history_except``. For those the drawn order is
rearranged to what the docs require, and nothing else.
"""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from runner import project as project_loader
from runner.project import Project
from tests.conftest import write_project
from tests.spark.test_merge_properties import apply_batches, history_rows, track_v

if TYPE_CHECKING:
    from typer.testing import Result

SCHEMA = "id BIGINT, s1 BIGINT, s2 BIGINT, v STRING, w STRING, op STRING"
STREAMS = (
    f'streams:\n  events:\n    format: json\n    path: landing/events\n    schema: "{SCHEMA}"\n'
)
Event = tuple[int, int, int, str | None, str | None, str]  # id, s1, s2, v, w, op
Row = tuple

MERGE_COLUMNS = "id BIGINT, s1 BIGINT, s2 BIGINT, v STRING, w STRING"
HISTORY_COLUMNS = (
    "id BIGINT, s1 BIGINT, v STRING, w STRING, valid_from BIGINT, valid_to BIGINT, "
    "is_current BOOLEAN, is_deleted BOOLEAN"
)


def merge_model(name: str, columns: str, arguments: str) -> str:
    return (
        f"{{{{ config(stream='events', target='invariance.{name}', unique_key='id', "
        f"sequence_by=['s1', 's2'], columns='{columns}') }}}}\n"
        f"{{{{ merge({arguments}) }}}};\n"
    )


def history_model(name: str, arguments: str) -> str:
    return (
        f"{{{{ config(stream='events', target='invariance.{name}', unique_key='id', "
        f"sequence_by='s1', columns='{HISTORY_COLUMNS}') }}}}\n"
        f"{{{{ scd2({arguments}) }}}};\n"
    )


@dataclass(frozen=True)
class Case:
    """A model, the arrival order the docs require of it, and what its oracle does."""

    sql: str
    arrival: str  # 'any', 'deletes_last' (no event after a newer delete), 'per_key', 'global'
    ops: str = "UUUD"
    deletes: str = "hard"  # or 'tombstone'
    ignore_null_updates: bool = False
    except_w: bool = False
    truncates: bool = False
    history: str | None = None  # scd2: 'all' (every change a version) or 'v' (track v only)
    ties: bool = True  # s1 often tied (s2 decides); scd2 orders by s1 alone


TOMBSTONES = f"{MERGE_COLUMNS}, is_deleted BOOLEAN"
CASES = {
    "tombstone": Case(
        merge_model("tombstone", TOMBSTONES, "delete_column='op', deletes='tombstone'"),
        arrival="any",
        deletes="tombstone",
    ),
    "tombstone_except": Case(
        merge_model(
            "tombstone_except",
            TOMBSTONES,
            "delete_column='op', deletes='tombstone', except_columns=['w']",
        ),
        arrival="any",
        deletes="tombstone",
        except_w=True,
    ),
    "hard": Case(merge_model("hard", MERGE_COLUMNS, "delete_column='op'"), arrival="deletes_last"),
    "partial_tombstone": Case(
        merge_model(
            "partial_tombstone",
            TOMBSTONES,
            "delete_column='op', deletes='tombstone', "
            "except_columns=['w'], ignore_null_updates=true",
        ),
        arrival="per_key",
        deletes="tombstone",
        ignore_null_updates=True,
        except_w=True,
    ),
    "partial_hard": Case(
        merge_model("partial_hard", MERGE_COLUMNS, "delete_column='op', ignore_null_updates=true"),
        arrival="per_key",
        ignore_null_updates=True,
    ),
    "truncating": Case(
        merge_model("truncating", MERGE_COLUMNS, "delete_column='op', truncate_when=\"op = 'T'\""),
        arrival="global",
        ops="UUUDT",
        truncates=True,
    ),
    "history": Case(
        history_model("history", "delete_column='op'"),
        arrival="any",
        history="all",
        ties=False,
    ),
    "history_tracked": Case(
        history_model("history_tracked", "delete_column='op', track_history_on=['v']"),
        arrival="per_key",
        history="v",
        ties=False,
    ),
}

# The default profile (4 examples) tries one sequence of up to 6 events per case: 8 cases, each
# applied three ways, one MERGE per batch. --slow (60) tries 15 sequences of up to 12 events.
THOROUGH = settings.default.max_examples > 4
EXAMPLES = max(1, settings.default.max_examples // 4)
MAX_EVENTS = 12 if THOROUGH else 6
PROPERTY_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


# -- the events and their arrival ----------------------------------------------------------


@st.composite
def arrivals(draw: st.DrawFn, ops: str, ties: bool) -> tuple[list[Event], int]:
    """Events of keys 0..3, (s1, s2) unique per key (s1 often tied if ``ties``), payloads sometimes
    NULL, a few delivered twice, in a random arrival order; and a seed for the cuts."""
    shapes = draw(
        st.lists(
            st.tuples(
                st.integers(0, 3),
                st.sampled_from(["a", "b", None]),
                st.sampled_from(["x", "y", None]),
                st.sampled_from(ops),
            ),
            min_size=1,
            max_size=MAX_EVENTS,
        )
    )
    order = draw(st.permutations(range(len(shapes))))
    events: list[Event] = [
        (k, i // 2 + 1 if ties else i + 1, i % 2 if ties else 0, v, w, op)
        for (k, v, w, op), i in zip(shapes, order, strict=True)
    ]
    for original in draw(st.lists(st.sampled_from(list(events)), max_size=MAX_EVENTS // 3)):
        events.insert(draw(st.integers(0, len(events))), original)
    return events, draw(st.integers(0, 2**32))


def seq(event: Event) -> tuple[int, int]:
    return event[1], event[2]


def arrange(events: list[Event], arrival: str) -> list[Event]:
    """The drawn arrival order, changed only as far as the case's documented rule requires."""
    if arrival == "any":
        return events
    if arrival == "global":
        return sorted(events, key=seq)
    rank: Callable[[Event], tuple]
    if arrival == "per_key":
        rank = seq
    else:  # deletes_last: each delete after every older event of its key

        def rank(event: Event) -> tuple:
            deletes = {seq(e) for e in events if e[0] == event[0] and e[5] == "D"}
            return (sum(1 for d in deletes if d < seq(event)), event[5] == "D")

    slots: dict[int, list[Event]] = {}
    for event in events:
        slots.setdefault(event[0], []).append(event)
    queues = {key: iter(sorted(own, key=rank)) for key, own in slots.items()}
    return [next(queues[event[0]]) for event in events]


def splits(events: list[Event], seed: int) -> dict[str, list[list[Event]]]:
    """The three ways of cutting one arrival into micro-batches."""
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(events)), min(3, len(events) - 1)))
    bounds = [0, *cuts, len(events)]
    return {
        "one batch": [events],
        "one batch per event": [[event] for event in events],
        "random cuts": [events[a:b] for a, b in zip(bounds, bounds[1:], strict=False)],
    }


# -- the oracle: events applied one at a time, in arrival order ------------------------------


def oracle_merge(case: Case, events: list[Event]) -> list[Row]:
    """merge() as the docs state it. An event not newer than its key's row is ignored. A
    delete removes the row (hard) or becomes it, flagged (tombstone), with the delete's own
    values. An update replaces the row; with ignore_null_updates its NULLs keep a live row's
    values. A truncate empties the table. w is never written with except_columns."""
    table: dict[int, dict] = {}
    for key, s1, s2, v, w, op in events:
        if case.truncates and op == "T":
            table.clear()
            continue
        row = table.get(key)
        if row is not None and (s1, s2) <= row["seq"]:
            continue
        w = None if case.except_w else w
        if op == "D":
            if case.deletes == "hard":
                table.pop(key, None)
            else:
                table[key] = {"seq": (s1, s2), "v": v, "w": w, "deleted": True}
            continue
        if row is not None and case.ignore_null_updates and not row["deleted"]:
            v = row["v"] if v is None else v
            w = row["w"] if w is None else w
        table[key] = {"seq": (s1, s2), "v": v, "w": w, "deleted": False}
    tombstone = (lambda r: (r["deleted"],)) if case.deletes == "tombstone" else (lambda r: ())
    return sorted((key, *r["seq"], r["v"], r["w"], *tombstone(r)) for key, r in table.items())


def oracle_history(case: Case, events: list[Event]) -> list[Row]:
    """scd2() as the docs state it. Every event is a version, put at its place in the key's
    history however late it arrives (a redelivery is no new version). With
    track_history_on=['v'] an event newer than the key's current version makes a new version
    only for a delete, a revival, a new key or a change of v, and otherwise updates the current
    version in place (its s1 and w too); an older event is ignored. Each version is valid until
    the next one starts."""
    history: dict[int, list[list]] = {}  # id -> [[s1, v, w, valid_from, deleted]]
    for key, s1, _s2, v, w, op in events:
        versions = history.setdefault(key, [])
        if case.history == "all":
            if all(s1 != version[0] for version in versions):
                versions.append([s1, v, w, s1, op == "D"])
                versions.sort()
            continue
        track_v(versions, s1, v, w, op)
    return history_rows(history)


# -- the runner ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def invariance_project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    models = {name: case.sql for name, case in CASES.items()}
    root = write_project(tmp_path_factory.mktemp("invariance") / "project", models, streams=STREAMS)
    return project_loader.load(root)


def target_rows(
    spark: SparkSession, project: Project, name: str, batches: list[list[Event]]
) -> list[Row]:
    table = apply_batches(spark, project, name, batches, SCHEMA)
    if CASES[name].history:
        return sorted((tuple(r) for r in table.collect()), key=lambda r: (r[0], r[4]))
    return sorted(tuple(r) for r in table.collect())


def oracle(case: Case, events: list[Event]) -> list[Row]:
    return oracle_history(case, events) if case.history else oracle_merge(case, events)


@pytest.mark.parametrize("name", list(CASES))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_same_events_same_table_however_batched(
    spark: SparkSession, invariance_project: Project, name: str, data: st.DataObject
) -> None:
    case = CASES[name]
    drawn, seed = data.draw(arrivals(case.ops, case.ties))
    events = arrange(drawn, case.arrival)
    expected = oracle(case, events)
    for how, batches in splits(events, seed).items():
        got = target_rows(spark, invariance_project, name, batches)
        assert got == expected, f"{name}, {how}: {batches}"


# -- the two cases of the issue, spelled out -------------------------------------------------

# Payload v is the status, w the amount; s1 is the time (02:30 = 230), s2 unused.


def test_a_late_event_does_not_leak_through_the_fold(
    spark: SparkSession, invariance_project: Project
) -> None:
    """Target row status 'b' at 03:20; the next batch holds 'c' at 02:30 (older than the
    target) and amount 3 at 04:10: the late 'c' is ignored, as it would be alone."""
    batches: list[list[Event]] = [
        [(1, 320, 0, "b", "1", "U")],
        [(1, 230, 0, "c", None, "U"), (1, 410, 0, None, "3", "U")],
    ]
    assert target_rows(spark, invariance_project, "partial_hard", batches) == [
        (1, 410, 0, "b", "3")
    ]


def test_a_delete_forgets_the_row_within_a_batch(
    spark: SparkSession, invariance_project: Project
) -> None:
    """Target row ('n', amount 1); one batch holds 'x' at 02:30, a delete at 03:20 and amount
    7 at 04:10: the delete forgets the row, so only amount 7 is left, as with three batches."""
    first = [(1, 100, 0, "n", "1", "U")]
    rest: list[Event] = [
        (1, 230, 0, "x", None, "U"),
        (1, 320, 0, None, None, "D"),
        (1, 410, 0, None, "7", "U"),
    ]
    together = target_rows(spark, invariance_project, "partial_hard", [first, rest])
    apart = target_rows(spark, invariance_project, "partial_hard", [first, *[[e] for e in rest]])
    assert together == apart == [(1, 410, 0, None, "7")]


# -- the worked examples of docs/macros/merge.md and scd2.md ---------------------------------

SAME_EVENTS = Path(__file__).resolve().parents[2] / "docs" / "examples" / "same_events"


@pytest.mark.parametrize("model", ["orders_partial", "orders_history"])
def test_the_docs_worked_examples_pass_as_their_output_shows(
    cli: Callable[..., Result], tmp_path: Path, model: str
) -> None:
    """The docs quote `runner test`'s output on docs/examples/same_events: each test it shows
    passing passes now, and it shows every unit test of the model."""
    project = tmp_path / "same_events"
    shutil.copytree(SAME_EVENTS, project, ignore=shutil.ignore_patterns("target", "*.txt"))
    result = cli("test", "-p", project, "-s", model)
    assert result.exit_code == 0, result.output
    shown = (SAME_EVENTS / f"runner-test-{model}.txt").read_text()
    names = re.findall(r"^PASS unit (\w+) ", shown, re.M)
    declared = re.findall(
        r"^  (\w+):$", (SAME_EVENTS / "models" / f"{model}.yml").read_text(), re.M
    )
    assert names == declared
    for name in names:
        assert f"PASS unit {name} " in result.output
