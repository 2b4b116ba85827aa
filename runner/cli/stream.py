"""`runner stream` and `runner run`: stream models into their Delta targets."""

from __future__ import annotations

import json
import signal
import threading
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from runner.cli.errors import reported_errors, while_running
from runner.cli.options import (
    Debug,
    Exclude,
    JunitXml,
    NoServer,
    ProjectDir,
    Select,
    State,
    Target,
    Vars,
)

if TYPE_CHECKING:  # imported where used: `runner --help` and `runner lint` load only their own
    from runner.checkpoint_lock import CheckpointLocks
    from runner.cli.run_record import RunRecord
    from runner.errors import RunnerError
    from runner.project import Project
    from runner.specs.model import ModelSpec
    from runner.specs.stream import TriggerSpec

Models = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        "-m",
        help="A model to run: its file name in models/ without .sql. Example: --model orders_merge",
    ),
]
FullRefresh = Annotated[
    bool,
    typer.Option(
        "--full-refresh",
        help="Delete the selected models' checkpoints and target tables first, and rebuild them "
        "from the start of their sources. Example: runner run -m orders_merge --full-refresh",
    ),
]
AdoptState = Annotated[
    bool,
    typer.Option(
        "--adopt-state",
        help="Accept a model's checkpoint and target as they are now when they no longer belong "
        "together (target deleted or replaced, checkpoint copied from another model, target "
        "without its checkpoint), record them as the model's, and go on; without it such a "
        "model stops before anything is written. "
        "Example: runner run -m orders_merge --adopt-state",
    ),
]
Verbose = Annotated[
    bool,
    typer.Option(
        "--verbose", "-v", help="Print every statement as it finishes. Example: runner stream -v"
    ),
]


@dataclass(frozen=True)
class RunChoices:
    """The options of `run` and `stream` that change what a run does to a model's state."""

    full_refresh: bool = False
    adopt_state: bool = False
    verbose: bool = False
    no_server: bool = False  # in this process even when the local server runs


def stream(
    model: Models = None,
    select: Select = None,
    exclude: Exclude = None,
    state: State = None,
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    full_refresh: FullRefresh = False,
    adopt_state: AdoptState = False,
    verbose: Verbose = False,
    no_server: NoServer = False,
    debug: Debug = False,
) -> None:
    """Stream models until stopped: Ctrl-C or SIGTERM stop them after the batch in flight.

    Several models run as one query each in one Spark application, upstream first; if one
    fails, all stop and the failure is reported.

    Example: runner stream --model orders_merge
    """
    _run(
        model or [],
        select or [],
        project_dir,
        target,
        vars,
        RunChoices(full_refresh, adopt_state, verbose, no_server),
        debug,
        exclude=exclude,
        state=state,
    )


def run(
    model: Models = None,
    select: Select = None,
    exclude: Exclude = None,
    state: State = None,
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    full_refresh: FullRefresh = False,
    adopt_state: AdoptState = False,
    verbose: Verbose = False,
    junit_xml: JunitXml = None,
    no_server: NoServer = False,
    debug: Debug = False,
) -> None:
    """Process what the models' sources hold now, then exit (trigger availableNow).

    Models run one after the other, upstream first. For schedulers and CI: each model's
    result (batches, rows, MERGE counts) is written to target/run_results.json.

    Example: runner run --model orders_merge --junit-xml target/junit.xml
    """
    from runner.specs.stream import TriggerSpec

    _run(
        model or [],
        select or [],
        project_dir,
        target,
        vars,
        RunChoices(full_refresh, adopt_state, verbose, no_server),
        debug,
        trigger=TriggerSpec(kind="available_now"),
        exclude=exclude,
        state=state,
        junit_xml=junit_xml,
    )


def _run(
    model_names: list[str],
    selectors: list[str],
    project_dir: Path,
    target: str | None,
    vars_text: str | None,
    choices: RunChoices,
    debug: bool,
    trigger: TriggerSpec | None = None,
    exclude: list[str] | None = None,
    state: Path | None = None,
    junit_xml: Path | None = None,
) -> None:
    from runner.checkpoint_lock import CheckpointLocks
    from runner.cli.options import parse_vars
    from runner.cli.progress import console
    from runner.errors import ConfigError
    from runner.project import load
    from runner.selection import select_models

    with reported_errors(debug):
        if not model_names and not selectors:
            raise ConfigError(
                "name the models to run", hint="for example: --model orders_merge or --select tag:x"
            )
        project = load(project_dir, target, parse_vars(vars_text))
        names = select_models(project, selectors, models=model_names, exclude=exclude, state=state)
        if not names:  # e.g. state:modified when nothing changed: nothing to do, as in dbt
            console.print("nothing to run: the selection matches no model.")
            return
        models = [project.models[name] for name in names]
        # one run per checkpoint: the OS releases the locks when this process ends, however
        with CheckpointLocks(project.target.revealed_conf) as locks:
            check_before_spark(project, models, choices, locks, waits=trigger is None)
            if trigger is None:  # `stream`: no end, so no run_results.json
                with while_running():
                    run_models(project, models, choices, trigger)
                return
            from runner.cli.run_record import RunRecord

            record = RunRecord(names)
            try:
                with while_running():
                    run_models(project, models, choices, trigger, record)
            except BaseException as exc:
                record.fail(*failure_of(exc, models))
                raise
            finally:
                selected = [*model_names, *selectors]
                record.write(project, "run", select=selected, exclude=exclude, junit_xml=junit_xml)


def check_before_spark(
    project: Project,
    models: list[ModelSpec],
    choices: RunChoices,
    locks: CheckpointLocks,
    *,
    waits: bool,
) -> None:
    """What `run`, `stream` and `build` check before Spark starts: warnings, source paths,
    env_var() values, one run per checkpoint (``locks``), its files and leftovers."""
    from rich.text import Text

    from runner import storage
    from runner.cli.progress import console
    from runner.model_sql import check_values_are_set
    from runner.source_paths import check_source_paths

    for warning in project.warnings:
        console.print(Text.assemble(("warning:", "yellow"), " ", str(warning)))
    # a file stream's path: a file is an error, a missing directory is created with a word
    for warning in check_source_paths(project, models, waits=waits):
        console.print(Text.assemble(("warning:", "yellow"), " ", warning))

    check_values_are_set(project, models)  # each env_var() value is set: before Spark
    root = project.target.checkpoint_root
    for model in models:  # on S3 a lease object (runner/checkpoint_lease.py)
        note = locks.acquire(root, model.name)
        if note:  # a dead run's lease taken over; a store where no lock holds
            console.print(note, highlight=False)
    if storage.reachable(root):  # else once the session reaches object storage (run_models)
        check_checkpoints(project, models, choices)


def check_checkpoints(project: Project, models: list[ModelSpec], choices: RunChoices) -> None:
    """With each model's lock held, before its query starts: the checkpoint's files can be
    read, a killed first batch's leftovers are cleared, new stream columns are reported."""
    from rich.text import Text

    from runner.checkpoint_files import check_checkpoint_files
    from runner.checkpoint_leftovers import remove_interrupted_first_batch
    from runner.cli.progress import console
    from runner.stream_columns import new_unmapped_columns

    for model in models:
        checkpoint = project.target.checkpoint_for(model.name)
        if not choices.full_refresh:  # which deletes the checkpoint, damaged or not
            check_checkpoint_files(model.name, checkpoint)
        leftovers = remove_interrupted_first_batch(checkpoint)
        if leftovers:
            console.print(
                f"{model.name}: removed {len(leftovers)} temp file(s) a killed start left "
                f"in {checkpoint} (no batch had been recorded yet)"
            )
        unmapped = new_unmapped_columns(project, model)
        if unmapped:
            console.print(Text.assemble(("warning:", "yellow"), " ", unmapped))


def run_models(
    project: Project,
    models: list[ModelSpec],
    choices: RunChoices,
    trigger: TriggerSpec | None,
    record: RunRecord | None = None,
) -> None:
    from rich.text import Text

    from runner.cli.live import LiveBoard, live_view
    from runner.cli.progress import console, print_batch, print_statement
    from runner.errors import RunnerError
    from runner.spark.streaming.pipeline import session_for, stream_models  # no JVM yet
    from runner.spark.streaming.query import Callbacks, RunningModel
    from runner.spark.streaming.state_guard import guard_models
    from runner.storage import RemotePath

    for model in models:
        console.print(
            Text.assemble(
                (model.name, "bold"),
                f": {model.config.stream} -> {model.target_table} "
                f"(target {project.target.name}, {project.target.shown})",
            )
        )
    stop = threading.Event()
    spark = session_for(
        project,
        models,
        no_server=choices.no_server,
        stop=stop,
    )
    if isinstance(project.target.checkpoint_root, RemotePath):  # not checked before Spark
        check_checkpoints(project, models, choices)
    if choices.full_refresh:
        from runner.spark.delta.targets import reset_model

        for model in models:
            for removed in reset_model(spark, project, model):
                console.print(f"full refresh: removed {removed}")
    # each checkpoint still with its own target, before anything of any model is written
    for adopted in guard_models(spark, project, models, adopt=choices.adopt_state):
        console.print(adopted)

    def request_stop(signum: int, _frame: object) -> None:
        if not stop.is_set():
            console.print(f"{signal.Signals(signum).name}: stopping after the batch in flight...")
        stop.set()

    # Installed after the session exists: pyspark's own SIGINT handler cancels jobs mid-batch.
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, request_stop) for sig in signals}
    # `stream` in a terminal redraws a table per model; `run` and pipes print lines.
    board = LiveBoard(project, models)
    shown = trigger is None and console.is_terminal
    show_batch = board.on_batch if shown else print_batch
    callbacks = Callbacks(
        on_batch=record.recording(show_batch) if record else show_batch,
        on_statement=print_statement if choices.verbose else None,
    )

    running: list[RunningModel] = []

    def progress_of_queries() -> list[tuple[str, dict[str, Any] | None, bool]]:
        queries = [r.query for r in list(running)]
        return [(q.name, progress_dict(q.lastProgress), q.isActive) for q in queries]

    try:
        with live_view(console, board, progress_of_queries) if shown else nullcontext():
            try:
                stopped = stream_models(
                    project,
                    models,
                    trigger=trigger,
                    callbacks=callbacks,
                    stop=stop,
                    spark=spark,
                    running=running,
                )
            except RunnerError as exc:
                board.record_error(_model_of(exc, models), exc.message)
                raise
            finally:
                board.finish()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    console.print("stopped cleanly." if stopped else "done: no more input.")


def failure_of(exc: BaseException, models: list[ModelSpec]) -> tuple[str | None, str]:
    """The model a run failed in (None when the error names none) and why."""
    from runner.errors import RunnerError

    if isinstance(exc, RunnerError):
        return _model_of(exc, models), str(exc)
    if isinstance(exc, KeyboardInterrupt):
        return None, "interrupted"
    return None, f"{type(exc).__name__}: {exc}"


def _model_of(error: RunnerError, models: list[ModelSpec]) -> str | None:
    """The model an error is about (by its file), or None when it names none."""
    return next((m.name for m in models if error.file == m.file), None)


def progress_dict(progress: Any) -> dict[str, Any] | None:
    """A query's lastProgress as a plain dict (pyspark returns a progress object or a dict)."""
    if progress is None:
        return None
    if hasattr(progress, "json"):  # StreamingQueryProgress: nested parts are objects too
        return json.loads(progress.json)
    return dict(progress)
