"""`runner backfill`: rebuild a model's history through its SQL as it is now into a shadow
table, report the difference from the live target per key, and with --apply bring the live
target and checkpoint to the shadow's state."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from runner.cli.errors import reported_errors, while_running
from runner.cli.options import (
    Debug,
    ModelName,
    ProjectDir,
    Target,
    TextOrJson,
    Vars,
    check_text_or_json,
)

if TYPE_CHECKING:  # imported where used: `runner --help` loads no Spark
    from runner.project import Project
    from runner.spark.backfill import BackfillResult
    from runner.specs.model import ModelSpec


def backfill(
    model: ModelName,
    apply: Annotated[
        bool,
        typer.Option(
            "--apply",
            help="Bring the live target to the shadow's state in one Delta commit (a MERGE of "
            "the difference: same table id and history; Change Data Feed readers see ordinary "
            "changes) and hand the live model the shadow's stream position. Needs the live "
            "model stopped (its checkpoint lock). Without it: a dry run. "
            "Example: runner backfill -m orders_merge --apply",
        ),
    ] = False,
    allow_deletes: Annotated[
        bool,
        typer.Option(
            "--allow-deletes",
            help="Delete the rows only in the live target even when the source no longer holds "
            "everything the target was built from (by default they are kept then). "
            "Example: runner backfill -m orders_merge --apply --allow-deletes",
        ),
    ] = False,
    samples: Annotated[
        int,
        typer.Option(
            "--samples",
            min=0,
            help="Differing rows shown per kind (only in live, only in shadow, changed). "
            "Example: --samples 10",
        ),
    ] = 3,
    output_format: TextOrJson = "text",
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    debug: Debug = False,
) -> None:
    """Replay the source's retained history through the model as it is now into a shadow
    table beside the live one (<target>__backfill, checkpoint <checkpoints>/<model>__backfill),
    then report the difference from the live target per unique_key: rows only in live, only
    in the shadow, and changed (per column, with samples). Dry run by default; every step
    resumes after a kill. Where the source no longer holds what the live target was built from
    (landing files gone, a Delta log cleaned up, Kafka records deleted by retention), the gap is
    named and the live rows the shadow cannot rebuild are kept. Each run keeps its report in
    target/backfill/<model>.json; `runner docs generate` shows it on the model's page.
    docs/changing-a-model.md has a worked example.

    Exit 0 when done, 1 on a failure while running (e.g. the live model is running: stop it
    before --apply), 2 on a usage or project error.

    Example: runner backfill --model orders_merge && runner backfill --model orders_merge --apply
    """
    from runner.backfill import BackfillPaths, backfill_model, shadow_name
    from runner.checkpoint_lock import CheckpointLocks
    from runner.cli.options import parse_vars
    from runner.project import load

    check_text_or_json(output_format)
    as_json = output_format == "json"
    with reported_errors(debug):
        project = load(project_dir, target, parse_vars(vars))
        chosen = backfill_model(project, model)
        root = project.target.checkpoint_root
        BackfillPaths.of(root, chosen.name)  # a checkpoint root it can hand over in
        assert isinstance(root, Path)
        with CheckpointLocks(project.target.revealed_conf) as locks:
            if apply:  # the live model stays stopped until its checkpoint is handed over
                _note(locks.acquire(root, chosen.name, file=chosen.file), as_json)
            _note(locks.acquire(root, shadow_name(chosen.name), file=chosen.file), as_json)
            with while_running():
                started = datetime.now(UTC)
                result = _run(project, chosen, apply, allow_deletes, samples, as_json)
        _show(result, allow_deletes, as_json)
        _record(project, result, allow_deletes, started, as_json)


def _run(
    project: Project,
    model: ModelSpec,
    apply: bool,
    allow_deletes: bool,
    samples: int,
    as_json: bool,
) -> BackfillResult:
    from runner.cli.progress import console, print_batch
    from runner.spark.backfill import run_backfill
    from runner.spark.streaming.pipeline import session_for
    from runner.spark.streaming.query import Callbacks

    def say(line: str) -> None:
        if as_json:  # stdout carries the JSON only
            print(line, file=sys.stderr)
        else:
            console.print(line)

    from runner.backfill import shadow_table

    say(f"{model.name}: shadow {shadow_table(model.target_table)}, from the source's history")
    # the shadow run loads the model by name on a Connect server: not supported (runner/backfill.py)
    spark = session_for(
        project, [model], unsupported_over_connect="backfill does not run over Spark Connect yet"
    )
    return run_backfill(
        spark,
        project,
        model,
        apply=apply,
        allow_deletes=allow_deletes,
        samples=samples,
        callbacks=Callbacks(on_batch=None if as_json else print_batch),
        say=say,
    )


def _note(line: str | None, as_json: bool) -> None:
    """A line the checkpoint lock has to say (a dead run's lease taken over), if any."""
    if line:
        print(line, file=sys.stderr if as_json else sys.stdout)


def _show(result: BackfillResult, allow_deletes: bool, as_json: bool) -> None:
    from runner.backfill_report import backfill_json, backfill_renderable
    from runner.terminal import plain_console

    if result.diff is None:  # a rerun that found the apply done by a killed run
        if as_json and result.outcome is not None:
            sys.stdout.write(json.dumps({"applied": asdict(result.outcome)}, indent=2) + "\n")
        return
    if as_json:
        sys.stdout.write(backfill_json(result.diff, result.gap, allow_deletes, result.outcome))
        return
    plain_console().print(
        backfill_renderable(result.diff, result.gap, allow_deletes, result.outcome)
    )


def _record(
    project: Project,
    result: BackfillResult,
    allow_deletes: bool,
    started: datetime,
    as_json: bool,
) -> None:
    """Keep the report under target/backfill/ for `runner docs generate`."""
    from runner.artifacts import project_path
    from runner.backfill_record import backfill_record, write_backfill_record

    if result.diff is None:  # a rerun that only finished a killed apply: the report was its
        return
    record = backfill_record(result.diff, result.gap, allow_deletes, result.outcome, started)
    path = project_path(project, write_backfill_record(project, record))
    line = f"report kept in {path} (runner docs generate shows it on the model's page)"
    print(line, file=sys.stderr if as_json else sys.stdout)
