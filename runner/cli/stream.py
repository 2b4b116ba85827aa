"""`runner stream` and `runner run`: stream a model into its Delta target."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import typer

from runner.cli.errors import reported_errors
from runner.cli.options import Debug, ModelName, ProjectDir, Target, Vars
from runner.cli.progress import console, print_batch
from runner.config import TriggerSpec
from runner.project import load, parse_vars


def stream(
    model: ModelName,
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    debug: Debug = False,
) -> None:
    """Stream a model until stopped (Ctrl-C or SIGTERM stop it after the batch in flight).

    Example: runner stream --model orders_merge
    """
    _run(model, project_dir, target, vars, debug, trigger=None)


def run(
    model: ModelName,
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    debug: Debug = False,
) -> None:
    """Process what the model's source holds now, then exit (trigger availableNow).

    Example: runner run --model orders_merge
    """
    _run(model, project_dir, target, vars, debug, trigger=TriggerSpec(kind="available_now"))


def _run(
    model_name: str,
    project_dir: Path,
    target: str | None,
    vars_text: str | None,
    debug: bool,
    trigger: TriggerSpec | None,
) -> None:
    with reported_errors(debug):
        project = load(project_dir, target, parse_vars(vars_text))
        model = project.model(model_name)

        from runner.spark.pipeline import session_for, stream_model  # starts no JVM yet

        console.print(
            f"[bold]{model.name}[/]: {model.config.stream} -> {model.target_table} "
            f"(target {project.target.name}, {project.target.master})"
        )
        spark = session_for(project)
        stop = threading.Event()

        def request_stop(signum: int, _frame: object) -> None:
            if not stop.is_set():
                console.print(
                    f"{signal.Signals(signum).name}: stopping after the batch in flight..."
                )
            stop.set()

        # Installed after the session exists: pyspark's own SIGINT handler cancels jobs mid-batch.
        previous = {
            sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            stopped = stream_model(
                project, model, trigger=trigger, on_batch=print_batch, stop=stop, spark=spark
            )
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        console.print("stopped cleanly." if stopped else "done: no more input.")
        if stopped:
            raise typer.Exit(0)
