"""`runner history --timings`: the table (and JSON) of where each batch's seconds went."""

from __future__ import annotations

import json

from rich import box
from rich.table import Table

from runner.spark.batch.timings import BatchTimings, StatementTiming

# Column headers of BATCH_PHASES, short: the table has to fit a terminal
PHASE_HEADERS = {
    "source": "source",
    "expectations": "expect",
    "schema_drift": "drift",
    "render": "render",
}
# Delta's times of a statement's commit, a column each after its seconds
DELTA_HEADERS = {
    "execution": "exec",
    "scan": "scan",
    "rewrite": "rewrite",
    "materialize_source": "mat",
}
LEGEND = """\
seconds. total: the batch up to its event-log write; the columns up to other are its parts
source: read, parse, quarantine, persist; expect: expectations; drift: schema_drift
exec, scan, rewrite, mat: Delta's own times of the statement on their left, from its commit
  (exec: its whole execution; mat: materializing the MERGE source)
other: the rest of total (progress output, replay look-ups)
event log: the batch's end to its row being durable (handed to the file a stream's row waits
  in, or its own Delta commit); checkpoint: Spark's commit of the batch minus that
  –: not known (an older row, a log or checkpoint not on this machine)"""


def timings_json(model: str, batches: list[BatchTimings], median: BatchTimings) -> str:
    return json.dumps(
        {
            "model": model,
            "batches": [b.as_dict() for b in batches],
            "median": median.as_dict(),
        },
        indent=2,
    )


def timings_table(model: str, batches: list[BatchTimings], median: BatchTimings) -> Table:
    """One row per batch, then the median row: seconds, each part in its column; after each
    statement, Delta's own times of its commit where any batch has them."""
    table = Table(
        title=f"{model}: where the seconds of the last {len(batches)} batches went",
        box=box.SIMPLE_HEAD,
        padding=0,  # the box puts one space between columns: the table has many
        pad_edge=False,
    )
    columns = statement_columns(batches)
    headers = ["batch", "total", *PHASE_HEADERS.values()]
    headers += [
        _statement_header(label, keyword, columns) if name is None else DELTA_HEADERS[name]
        for label, keyword, name in columns
    ]
    for header in [*headers, "other", "event\nlog", "check\npoint"]:
        table.add_column(header, justify="right", no_wrap=True)
    for index, batch in enumerate([*batches, median]):
        table.add_row(*_cells(batch, columns), end_section=index == len(batches) - 1)
    return table


# A statement's column: (label, keyword, None) for its seconds, (label, keyword, name) for one
# of Delta's times of its commit.
StatementColumn = tuple[str, str, str | None]


def statement_columns(batches: list[BatchTimings]) -> list[StatementColumn]:
    """Each statement's column, in the order the batches ran them, then a column for each of
    Delta's times any batch has for it."""
    keywords: dict[str, str] = {}
    delta: dict[str, dict[str, None]] = {}
    for batch in batches:
        for label, timing in batch.statements.items():
            keywords[label] = timing.keyword
            delta.setdefault(label, {}).update(dict.fromkeys(timing.delta))
    return [
        column
        for label, keyword in keywords.items()
        for column in [
            (label, keyword, None),
            *((label, keyword, name) for name in DELTA_HEADERS if name in delta[label]),
        ]
    ]


def _statement_header(label: str, keyword: str, columns: list[StatementColumn]) -> str:
    """``MERGE``; ``MERGE batch[2]`` when the model runs more than one MERGE."""
    same = {other for other, kind, name in columns if kind == keyword and name is None}
    return keyword if len(same) == 1 else f"{keyword}\n{label}"


def _cells(batch: BatchTimings, columns: list[StatementColumn]) -> list[str]:
    return [
        "median" if batch.batch_id is None else str(batch.batch_id),
        _seconds(batch.total),
        *(_seconds(batch.phases.get(name)) for name in PHASE_HEADERS),
        *(_statement_cell(batch.statements.get(label), name) for label, _, name in columns),
        _seconds(batch.other),
        _seconds(batch.event_log),
        _seconds(batch.checkpoint),
    ]


def _statement_cell(timing: StatementTiming | None, delta_name: str | None) -> str:
    """A statement's seconds (``skipped 0.31`` when Delta skipped it), or one of Delta's times
    of its commit; empty when the batch did not run it (maintenance runs every N batches)."""
    if timing is None:
        return ""
    if delta_name is not None:
        return _seconds(timing.delta.get(delta_name))
    took = _seconds(timing.seconds)
    return f"skipped {took}" if timing.skipped else took


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
