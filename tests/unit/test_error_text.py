"""runner.error_text: the one way to read an error's message and its first informative line,
on plain exceptions and on texts and exception chains shaped like Spark's, Py4J's and Delta's."""

from __future__ import annotations

import subprocess
import sys

import pytest
from py4j.protocol import Py4JError, Py4JJavaError
from pyspark.errors import PySparkException

from runner.error_text import error_text, first_line

DELTA_MESSAGE = (
    "[DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE] Cannot perform Merge as multiple "
    "source rows matched and attempted to modify the same target row in the Delta table."
)
JAVA_FRAMES = (
    "\tat org.apache.spark.sql.delta.DeltaErrors$.multipleSourceRowMatchingTargetRowInMerge"
    "(DeltaErrors.scala:1234)\n"
    "\tat java.base/java.lang.Thread.run(Thread.java:840)\n"
    "\t... 42 more\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("boom", "boom"),
        ("first\nsecond", "first"),
        ("\n\n   indented message  \nnext", "indented message"),
        ("", ""),
        ("\n  \n", ""),
        # str() of a Py4JJavaError: Py4J's preamble, then the Java exception's toString()
        (
            "An error occurred while calling o45.sql.\n"
            f": org.apache.spark.sql.delta.DeltaUnsupportedOperationException: {DELTA_MESSAGE}\n"
            + JAVA_FRAMES,
            DELTA_MESSAGE,
        ),
        # str() of pyspark's captured exception when the JVM message is empty
        (
            "\n\nJVM stacktrace:\n"
            f"org.apache.spark.sql.delta.DeltaIllegalStateException: {DELTA_MESSAGE}\n"
            + JAVA_FRAMES,
            DELTA_MESSAGE,
        ),
        # an AnalysisException: the message, its position, then the plan on later lines
        (
            "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with "
            "name `idx` cannot be resolved. SQLSTATE: 42703; line 1 pos 15;\n"
            "'Project ['s.items['idx] AS x#1]\n+- SubqueryAlias s\n",
            "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with "
            "name `idx` cannot be resolved. SQLSTATE: 42703; line 1 pos 15;",
        ),
        # a message that merely contains a dotted name and a colon is left whole
        (
            "models/orders.sql: silver.orders: Table not found",
            "models/orders.sql: silver.orders: Table not found",
        ),
    ],
)
def test_first_line_of_a_text(text: str, expected: str) -> None:
    assert first_line(text) == expected


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ValueError("bad value\nmore detail"), "bad value"),
        (RuntimeError("\n  leading blank line\n"), "leading blank line"),
        (KeyError(), "KeyError"),  # nothing to say: the type's name
        (
            PySparkException(message=f"{DELTA_MESSAGE}\n\nJVM stacktrace:\n{JAVA_FRAMES}"),
            DELTA_MESSAGE,
        ),
    ],
)
def test_first_line_of_an_exception(error: BaseException, expected: str) -> None:
    assert first_line(error) == expected


class FakeJavaException:
    """Stands in for a py4j JavaObject: what Py4JJavaError and error_text use of it."""

    _target_id = "o99"

    def __init__(self, message: str | None, *, readable: bool = True) -> None:
        self.message = message
        self.readable = readable

    def getMessage(self) -> str | None:  # noqa: N802 - Java's name
        if not self.readable:
            raise Py4JError("An error occurred while calling o99.getMessage")
        return self.message

    def toString(self) -> str:  # noqa: N802 - Java's name
        return f"org.apache.spark.sql.delta.DeltaAnalysisException: {self.message}"


def java_error(message: str | None, *, readable: bool = True) -> Py4JJavaError:
    return Py4JJavaError(
        "An error occurred while calling o45.sql.\n", FakeJavaException(message, readable=readable)
    )


def test_a_py4j_error_reads_the_jvm_message_not_py4j_preamble() -> None:
    error = java_error(f"{DELTA_MESSAGE}\n{JAVA_FRAMES}")
    assert error_text(error) == f"{DELTA_MESSAGE}\n{JAVA_FRAMES}".strip()
    assert first_line(error) == DELTA_MESSAGE


def test_a_failed_message_lookup_reports_the_original_delta_error() -> None:
    """pyspark asks Spark for the message of Delta's error class; when that lookup fails, the
    lookup's Py4J error is raised while the original one is handled. The original is meant."""
    original = java_error(DELTA_MESSAGE)
    lookup = java_error("[INTERNAL_ERROR] Cannot find main error class 'DELTA_FOO'")
    try:
        try:
            raise original
        except Py4JJavaError:
            raise lookup from None
    except Py4JJavaError as raised:
        caught = raised
    assert caught is lookup
    assert first_line(caught) == DELTA_MESSAGE


def test_a_jvm_message_that_cannot_be_read_falls_back_to_its_string() -> None:
    error = java_error(DELTA_MESSAGE, readable=False)
    assert first_line(error) == DELTA_MESSAGE


def test_reading_errors_imports_no_jvm_code() -> None:
    code = (
        "import sys\n"
        "from runner.error_text import first_line\n"
        "assert first_line(ValueError('x')) == 'x'\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


class FakeThrowable:
    """A JVM Throwable as Py4J shows it: getMessage, toString, getCause."""

    def __init__(self, message: str | None, cause: FakeThrowable | None = None) -> None:
        self.message, self.cause = message, cause

    def getMessage(self) -> str | None:  # noqa: N802 (Java's name)
        return self.message

    def toString(self) -> str:  # noqa: N802
        return f"java.lang.RuntimeException: {self.message}"

    def getCause(self) -> FakeThrowable | None:  # noqa: N802
        return self.cause


class CapturedError(Exception):
    """pyspark's captured exception keeps the JVM Throwable as ``_origin``."""

    def __init__(self, origin: FakeThrowable) -> None:
        super().__init__(origin.getMessage())
        self._origin = origin


CAST = '[CAST_INVALID_INPUT] The value \'ten\' of the type "STRING" cannot be cast to "BIGINT"'
TASK = "[TASK_WRITE_FAILED] Task failed while writing rows to file:/w/s/t. SQLSTATE: 58030"


def test_a_task_failure_shows_the_error_class_deepest_in_its_cause_chain() -> None:
    from runner.error_text import first_line_with_cause, root_cause

    chain = FakeThrowable(TASK, FakeThrowable(f"{CAST}\n== SQL ==", FakeThrowable("at codegen")))
    error = CapturedError(chain)

    assert root_cause(error) == CAST  # the classed message, not the innermost plain one
    assert first_line_with_cause(error) == f"{TASK}; caused by: {CAST}"


def test_an_error_that_is_not_a_wrapper_keeps_its_own_line() -> None:
    from runner.error_text import first_line_with_cause

    error = CapturedError(FakeThrowable("[TABLE_OR_VIEW_NOT_FOUND] x", FakeThrowable(CAST)))

    assert first_line_with_cause(error) == "[TABLE_OR_VIEW_NOT_FOUND] x"
    assert first_line_with_cause(ValueError(TASK)) == TASK  # no JVM cause to read
