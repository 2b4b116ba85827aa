"""The one error handler of the CLI: a clear message on stderr and a meaningful exit code."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

from runner.errors import ConfigError, RunnerError

stderr = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_FAILURE = 1
EXIT_CONFIG = 2


@contextmanager
def reported_errors(debug: bool = False) -> Iterator[None]:
    """Turn RunnerError into 'error: ...' and exit 1 (2 for configuration errors)."""
    try:
        yield
    except RunnerError as exc:
        if debug:
            traceback.print_exc(file=sys.stderr)
        stderr.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        raise typer.Exit(EXIT_CONFIG if isinstance(exc, ConfigError) else EXIT_FAILURE) from None
