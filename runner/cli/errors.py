"""The one error handler of the CLI: a clear message on stderr and a meaningful exit code."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

import typer

from runner.errors import ConfigError, RunnerError, TemplateError
from runner.secrets import redact
from runner.target_address import TargetUnreachable

EXIT_FAILURE = 1  # a failure while running: a batch, a statement, Spark, a busy checkpoint
EXIT_CONFIG = 2  # a problem found before Spark runs: YAML, config(), Jinja, selection


def exit_code_of(exc: RunnerError) -> int:
    """2 for what the user must fix in the project or the command line (found before Spark
    runs), 1 for everything that failed while running."""
    if isinstance(exc, TargetUnreachable):  # found before Spark runs, wherever it is raised
        return EXIT_CONFIG
    if exc.while_running:
        return EXIT_FAILURE
    return EXIT_CONFIG if isinstance(exc, ConfigError | TemplateError) else EXIT_FAILURE


@contextmanager
def while_running() -> Iterator[None]:
    """Mark errors raised inside as failures while running (exit 1), whatever their type."""
    try:
        yield
    except RunnerError as exc:
        exc.while_running = True
        raise


@contextmanager
def reported_errors(debug: bool = False) -> Iterator[None]:
    """Turn RunnerError into 'error: ...' and exit with ``exit_code_of`` it."""
    try:
        yield
    except RunnerError as exc:
        if debug:
            traceback.print_exc(file=sys.stderr)
        # rich is imported only here, when there is an error to show
        from rich.text import Text

        from runner.terminal import plain_console

        stderr = plain_console(stderr=True, soft_wrap=True)
        # a value from env_var() shows as env_var('NAME'), also where Spark quoted it back
        stderr.print(Text.assemble(("error:", "bold red"), " ", redact(str(exc))))
        raise typer.Exit(exit_code_of(exc)) from None
