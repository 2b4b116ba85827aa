"""`runner history`: what each micro-batch of a model did, from the event log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, get_args

import typer

from runner.choices import is_one_of
from runner.cli.errors import EXIT_CONFIG, reported_errors
from runner.cli.options import Debug, NoServer, ProjectDir, Target

if TYPE_CHECKING:  # imported where used: `runner --help` and `runner lint` load only their own
    from runner.project import Project
    from runner.specs.model import ModelSpec

HistoryFormat = Literal["table", "json"]
FORMATS: tuple[HistoryFormat, ...] = get_args(HistoryFormat)


def history(
    model: Annotated[
        str,
        typer.Option("--model", "-m", help="The model. Example: --model orders_merge"),
    ],
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", help="Newest batches to show. Example: -n 50")
    ] = 20,
    output: Annotated[
        str,
        typer.Option("--format", "-f", help="table (for people) or json. Example: --format json"),
    ] = "table",
    timings: Annotated[
        bool,
        typer.Option(
            "--timings",
            help="Where each batch's seconds went: source, expectations, drift and render, each "
            "statement (with Delta's own execution, scan and rewrite times from its commit), "
            "the event-log write and the checkpoint commit, then the median of each; "
            "--format json gives the same numbers. "
            "Example: runner history -m orders_merge --timings -n 50",
        ),
    ] = False,
    no_server: NoServer = False,
    debug: Debug = False,
) -> None:
    """Show a model's micro-batches from the event log: rows in, MERGE counts, durations;
    with --timings, where each batch's seconds went.

    Example: runner history --model orders_merge --timings
    """
    from rich.table import Table

    from runner.cli.progress import console
    from runner.project import load

    if not is_one_of(output, FORMATS):  # a typo must not fall back to the table silently
        typer.echo(f"error: --format must be one of {', '.join(FORMATS)}, got {output!r}", err=True)
        raise typer.Exit(EXIT_CONFIG)
    with reported_errors(debug):
        project = load(project_dir, target)
        spec = project.model(model)

        from runner.spark.batch.eventlog import read_history
        from runner.spark.streaming.pipeline import session_for

        rows = read_history(
            session_for(project, [], no_server=no_server), project.target, spec.name, limit
        )
        if timings:
            _show_timings(project, spec, [r.asDict(recursive=True) for r in rows], output)
            return
        if output == "json":
            typer.echo(json.dumps([_plain(r.asDict(recursive=True)) for r in rows], indent=2))
            return
        first = rows[0]["started_at"].strftime("%Y-%m-%d") if rows else ""
        table = Table(title=f"{spec.name}: last {len(rows)} batches (from {first}, UTC)")
        # rows left out by a 'drop' expectation: a column only when some batch dropped rows
        dropping = any(r.asDict().get("dropped") for r in rows)
        counts = ("batch", "started", "rows in", "ins", "upd", "del", "quar")
        for column in (*counts, *(["drop"] if dropping else []), "secs"):
            table.add_column(column, justify="right", no_wrap=True)
        table.add_column("statements (seconds)", overflow="fold")
        checked = any(r.asDict().get("expectations") for r in rows)
        if checked:
            table.add_column("expectations", overflow="fold")
        for row in rows:
            table.add_row(
                str(row["batch_id"]),
                row["started_at"].strftime("%H:%M:%S"),
                str(row["input_rows"]),
                str(row["inserted"]) + ("*" if row.asDict().get("recovered") else ""),
                str(row["updated"]),
                str(row["deleted"]),
                str(row["quarantined"]),
                *([str(row.asDict().get("dropped") or 0)] if dropping else []),
                f"{row['seconds']:.1f}",
                " ".join(_step(s) for s in row["statements"]),
                *([_expectations(row.asDict().get("expectations"))] if checked else []),
            )
        console.print(table)
        if any(r.asDict().get("recovered") for r in rows):
            console.print(
                "* a replayed batch: its MERGE had committed before a crash; the counts are "
                "that commit's, read from the Delta log"
            )


def _show_timings(project: Project, spec: ModelSpec, rows: list[dict], output: str) -> None:
    from runner.cli.history_timings import LEGEND, timings_json, timings_table
    from runner.cli.progress import console
    from runner.spark.batch.timings import batch_timings, median_timings, timing_files

    batches = batch_timings(rows, spec.name, timing_files(project.target, spec))
    median = median_timings(batches)
    if output == "json":
        typer.echo(timings_json(spec.name, batches, median))
        return
    console.print(timings_table(spec.name, batches, median))
    console.print(LEGEND)


def _expectations(outcomes: list | None) -> str:
    """The expectations that failed rows, ``amount_positive 2/40 drop``; else ``2 passed``."""
    failing = [
        f"{e['name']} {e['failed']}/{e['passed'] + e['failed']} {e['action']}"
        for e in outcomes or []
        if e["failed"]
    ]
    return " ".join(failing) if failing else f"{len(outcomes or [])} passed"


def _step(statement: dict) -> str:
    took = f"{statement['seconds']:.1f}"
    if statement["skipped"]:
        took = "recovered" if statement.get("inserted") is not None else "skipped"
    return f"{statement['keyword']} {took}"


def _plain(value: object) -> object:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value
