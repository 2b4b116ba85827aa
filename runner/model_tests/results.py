"""What a test run found, and how it is shown: rich tables for people, JUnit XML for CI."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from rich.console import RenderableType
from rich.table import Table

from runner.junit import JunitCase, Outcome, write_junit
from runner.terminal import plain_console

TestStatus = Literal["pass", "fail", "error"]
PASS: Final = "pass"
FAIL: Final = "fail"
ERROR: Final = "error"


@dataclass
class TestResult:
    """The outcome of one data test or unit test."""

    __test__ = False  # not a pytest test class

    name: str
    kind: Literal["data", "unit", "singular"]
    model: str
    status: TestStatus = PASS
    seconds: float = 0.0
    message: str = ""  # one line: what failed
    details: list[RenderableType] = field(default_factory=list)  # tables of rows or diffs
    sql: str | None = None  # a data test's query
    failures: int | None = None  # a data test's failing rows (dbt's run_results "failures")

    @property
    def passed(self) -> bool:
        return self.status == PASS


def failing_rows_table(
    title: str, columns: list[str], rows: list[tuple[object, ...]], count: int
) -> Table:
    """A sample of a data test's failing rows (``count`` is how many failed in all)."""
    shown = f"{len(rows)} of {count}" if count > len(rows) else str(count)
    noun = "row" if count == 1 else "rows"
    table = Table(title=f"{title}: {shown} failing {noun}", title_justify="left")
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*["NULL" if value is None else str(value) for value in row])
    return table


def plain_text(renderables: list[RenderableType], width: int = 120) -> str:
    """Renderables as plain text (no colour codes), for JUnit XML and logs."""
    buffer = io.StringIO()
    console = plain_console(file=buffer, width=width, no_color=True, color_system=None)
    for item in renderables:
        console.print(item)
    return buffer.getvalue()


def summary_line(results: list[TestResult]) -> str:
    """``5 passed, 1 failed, 0 errors in 12.3s``."""
    counts = {status: sum(r.status == status for r in results) for status in (PASS, FAIL, ERROR)}
    seconds = sum(r.seconds for r in results)
    return (
        f"{counts[PASS]} passed, {counts[FAIL]} failed, {counts[ERROR]} errors "
        f"({len(results)} test{'' if len(results) == 1 else 's'}, {seconds:.1f}s of test time)"
    )


def write_junit_xml(results: list[TestResult], path: Path, suite: str) -> None:
    """One ``<testcase>`` per test (classname ``<kind>.<model>``); a failure or error carries
    its message and, as text, the failing rows or the row diff (runner/junit.py writes it)."""
    write_junit([junit_case(r) for r in results], path, suite)


def junit_case(result: TestResult) -> JunitCase:
    outcomes: dict[TestStatus, Outcome] = {PASS: "pass", FAIL: "failure", ERROR: "error"}
    outcome = outcomes[result.status]
    return JunitCase(
        f"{result.kind}.{result.model}",
        result.name,
        result.seconds,
        outcome,
        result.message,
        plain_text(result.details) if result.details else result.message,
    )
