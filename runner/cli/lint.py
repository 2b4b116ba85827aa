"""`runner lint`: Delta-aware rules over every model, reported at model file:line:col."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from runner.choices import is_one_of
from runner.cli.errors import EXIT_CONFIG, reported_errors
from runner.cli.options import Debug, Exclude, ProjectDir, Select, State, Target, Vars
from runner.lint.formats import FORMATS

if TYPE_CHECKING:
    from runner.lint.findings import LintResult


def lint(
    select: Select = None,
    exclude: Exclude = None,
    state: State = None,
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help=f"Output format: {', '.join(FORMATS)} (github = workflow "
            "annotations, sarif = GitHub code scanning). "
            "Example: --format github",
        ),
    ] = "text",
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Exit 1 on warnings too, not only on errors. Example: runner lint --strict",
        ),
    ] = False,
    analyze: Annotated[
        bool,
        typer.Option(
            "--analyze",
            help="Also run each statement through Spark's analyzer against empty stand-ins of "
            "the batch views and targets (starts a local Spark; catches unresolved columns and "
            "type errors). Example: runner lint --analyze",
        ),
    ] = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Render, parse and check every model even when nothing changed since the last "
            "lint (the lint cache otherwise answers for an unchanged project; "
            "RUNNER_LINT_CACHE moves it, set empty turns it off). Example: runner lint --no-cache",
        ),
    ] = False,
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    debug: Debug = False,
) -> None:
    """Lint every model: render it for the first batch and a maintenance batch, parse each
    statement with the Delta dialect and run the rules. No JVM, unless --analyze: then each
    statement also goes through Spark's analyzer (rule DL100).

    Exit 0 when there are no errors (warnings are printed), 1 on errors (or warnings with
    --strict), 2 on a usage or project configuration error.

    Example: runner lint --format github
    """
    from runner.cli.options import parse_vars
    from runner.lint.report import format_result
    from runner.lint.result_cache import cached_result, result_key, store_result

    if not is_one_of(output_format, FORMATS):
        typer.echo(
            f"error: --format must be one of {', '.join(FORMATS)}, got {output_format!r}",
            err=True,
        )
        raise typer.Exit(EXIT_CONFIG)
    started = time.perf_counter()
    with reported_errors(debug):
        cli_vars = parse_vars(vars)
        # --analyze asks a JVM and --state reads a manifest: neither is in the cache's key
        key = None
        if not (analyze or state or no_cache):
            key = result_key(
                project_dir, target=target, cli_vars=cli_vars, select=select, exclude=exclude
            )
        result = cached_result(project_dir, key) if key else None
        if result is not None:
            result = replace(result, seconds=time.perf_counter() - started)
        else:
            result = _lint(project_dir, target, cli_vars, select, exclude, state, analyze)
            if key:
                store_result(project_dir, key, result)
    # plain write, not rich: annotations and JSON must reach stdout byte for byte
    sys.stdout.write(format_result(result, output_format))
    raise typer.Exit(result.exit_code(strict))


def _lint(
    project_dir: Path,
    target: str | None,
    cli_vars: dict[str, Any],
    select: list[str] | None,
    exclude: list[str] | None,
    state: Path | None,
    analyze: bool,
) -> LintResult:
    """The findings computed: rules, and Spark's analyzer with ``analyze``."""
    from runner.lint import lint_project

    analyzer = None
    if analyze:
        # Imported only here: plain `runner lint` never imports pyspark.
        from runner.spark.analyze import analyze_project

        analyzer = analyze_project
    return lint_project(
        project_dir, target, cli_vars, select, analyzer=analyzer, exclude=exclude, state=state
    )
