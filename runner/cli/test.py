"""`runner test`: model unit tests (through the real per-batch path) and data tests."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from runner.cli.errors import EXIT_FAILURE, reported_errors
from runner.cli.options import Debug, Exclude, JunitXml, NoServer, ProjectDir, State, Target, Vars

if TYPE_CHECKING:  # imported where used: `runner --help` and `runner lint` load only their own
    from runner.model_tests.results import TestResult
    from runner.project import Project
    from runner.specs.suite import TestSuite

TestSelect = Annotated[
    list[str] | None,
    typer.Option(
        "--select",
        "-s",
        help="Tests of these models (dbt's selectors, as in runner run), tests by name, and "
        "test_type:unit, test_type:data (generic and singular), test_type:generic or "
        "test_type:singular (tests/*.sql). Spaces (or repeating -s) union, commas intersect. "
        "Example: --select orders_merge,test_type:unit",
    ),
]
ShowSql = Annotated[
    bool,
    typer.Option(
        "--show-sql",
        help="Print each data test's query instead of running anything (no JVM). "
        "Example: runner test --show-sql -s orders_merge",
    ),
]


def run_tests(
    select: TestSelect = None,
    exclude: Exclude = None,
    state: State = None,
    junit_xml: JunitXml = None,
    show_sql: ShowSql = False,
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    no_server: NoServer = False,
    debug: Debug = False,
) -> None:
    """Run the model unit tests (models/*.yml unit_tests:) on scratch tables and, beside them,
    the data tests (models/*.yml models:, and the singular tests tests/*.sql) on the target
    tables; results are listed unit tests first.
    Freshness is measured against the time the command started (UTC). Writes
    target/run_results.json. Exit 0 when all pass, 1 when any fails.

    Example: runner test --select orders_merge --junit-xml target/junit.xml
    """
    from runner.cli.options import parse_vars
    from runner.cli.progress import console
    from runner.model_tests.results import summary_line, write_junit_xml
    from runner.project import load
    from runner.suite_selection import load_suite, select_tests

    now = datetime.now(UTC).replace(tzinfo=None)
    with reported_errors(debug):
        project = load(project_dir, target, parse_vars(vars))
        suite = select_tests(project, load_suite(project), select, exclude=exclude, state=state)
        if show_sql:
            _print_sql(project, suite, now)
            return
        if not suite.size:
            console.print("no tests selected.")
            return

        from runner.run_results import node_of_test, now_utc, write_command_results
        from runner.spark.streaming.pipeline import session_for
        from runner.spark.testing.suite import run_suite

        started = now_utc()
        nodes = []

        def on_result(result: TestResult) -> None:
            nodes.append(node_of_test(result, now_utc()))
            print_test_result(result)

        results = run_suite(
            session_for(project, no_server=no_server), project, suite, now, on_result
        )
        write_command_results(
            project.root,
            project.name,
            "test",
            nodes,
            started,
            target=project.target.name,
            select=select,
            exclude=exclude,
        )
    console.print(summary_line(results))
    if junit_xml is not None:
        write_junit_xml(results, junit_xml, suite=f"runner test {project.name}")
        console.print(f"wrote {junit_xml}")
    if not all(r.passed for r in results):
        raise typer.Exit(EXIT_FAILURE)


def print_test_result(result: TestResult) -> None:
    from rich.text import Text

    from runner.cli.progress import console
    from runner.model_tests.results import TestStatus

    label: dict[TestStatus, tuple[str, str]] = {
        "pass": ("PASS", "green"),
        "fail": ("FAIL", "red"),
        "error": ("ERROR", "red"),
    }
    console.print(
        Text.assemble(
            label[result.status],
            f" {result.kind} {result.name} ",
            (f"({result.model}, {result.seconds:.2f}s)", "dim"),
            f": {result.message}" if result.message else "",
        )
    )
    for detail in result.details:
        console.print(detail)


def _print_sql(project: Project, suite: TestSuite, now: datetime) -> None:
    from runner.artifacts import project_path
    from runner.model_tests.data_test_sql import data_test_sql

    for test in suite.data_tests:
        where = project_path(project, test.file)
        typer.echo(f"-- {test.name}: {test.kind} on {test.model} ({where}:{test.line})")
        typer.echo(data_test_sql(project, test, now) + ";\n")
    for singular in suite.singular_tests:
        typer.echo(f"-- {singular.name}: singular test ({project_path(project, singular.file)})")
        typer.echo(singular.sql + ";\n")
