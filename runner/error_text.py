"""Reading an error's message: its whole text (the JVM's own for a Spark error), and the first
line of it that says something, for one-line reports.

Pure: pyspark and py4j are never imported here, so the linter and the CLI's error path load no
JVM code. Their exception types are recognised only when they are loaded already, since an
exception of theirs cannot exist before.

    >>> first_line(ValueError("\\n  the table is not a Delta table\\n  at ..."))
    'the table is not a Delta table'
"""

from __future__ import annotations

import re
import sys

# Lines of an error's text that are not its message: Py4J's preamble (the message follows on
# the next line, after ": "), the header pyspark puts before the Java stack trace, and Java
# stack frames.
_NOT_THE_MESSAGE = re.compile(
    r"""
      An\ error\ occurred\ while\ calling\ \S+
    | JVM\ stacktrace:
    | at\ [\w$.<>/]+\(.*\)
    | \.\.\.\ \d+\ more
    """,
    re.VERBOSE,
)
# The Java class at the start of a Throwable's toString(): "org.apache...DeltaException: ..."
_JAVA_CLASS = re.compile(r"(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*: ")
# A message that starts with Spark's (or Delta's) error class: "[CAST_INVALID_INPUT] ..."
_ERROR_CLASS = re.compile(r"\[[A-Z][A-Z0-9_.]*\]")
# Wrappers whose own message says only that something below failed (the task, the job): the
# line shown for them is their root cause's.
_WRAPPERS = ("[TASK_WRITE_FAILED]", "Job aborted", "Task failed", "[FAILED_EXECUTE_UDF]")
_MAX_CAUSES = 32


def error_text(error: BaseException) -> str:
    """The message of ``error`` without a Java stack trace, stripped.

    pyspark turns a JVM exception into a Python one by asking Spark for the message of its error
    class. Spark does not know Delta's error classes, so for some Delta errors that lookup fails
    and a Py4J error about the lookup comes out instead; the original JVM exception is then the
    oldest one on the chain of Python exceptions, and its own getMessage() is right. (``str()``
    of a Py4J error starts with "An error occurred while calling o123.sql.", which says nothing.)
    """
    if _is_instance(error, "pyspark.errors", "PySparkException"):
        return str(error).strip()
    chain: list[BaseException] = []
    seen: BaseException | None = error
    while seen is not None and seen not in chain:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    java_errors = [e for e in chain if _is_instance(e, "py4j.protocol", "Py4JJavaError")]
    if java_errors:
        original = java_errors[-1].java_exception  # type: ignore[attr-defined]
        try:
            return str(original.getMessage()).strip()
        except Exception:  # a Py4JError: the JVM cannot tell its message; its toString can
            return str(original.toString()).strip()
    return str(error).strip()


def first_line(error: BaseException | str) -> str:
    """The first line of an error's message that says something: blank lines, Py4J's "An error
    occurred while calling ..." preamble, a Java class name before the message, pyspark's "JVM
    stacktrace:" header and stack frames are passed over. For an exception without any such
    line, its type's name; for text without one, "".

    >>> first_line("An error occurred while calling o45.sql.\\n: org.apache.Err: [X] no table")
    '[X] no table'
    """
    text = error_text(error) if isinstance(error, BaseException) else error
    for raw in text.splitlines():
        line = raw.strip().removeprefix(": ")
        if line and not _NOT_THE_MESSAGE.fullmatch(line):
            java_class = _JAVA_CLASS.match(line)
            return line[java_class.end() :] if java_class else line
    return type(error).__name__ if isinstance(error, BaseException) else ""


def root_cause(error: BaseException) -> str | None:
    """The first line of the innermost cause of a JVM error that names an error class
    (``[CAST_INVALID_INPUT] The value 'ten' of the type "STRING" cannot be cast to "BIGINT"
    ...``), else of its innermost cause; None when the error has no JVM cause. Spark wraps the
    error a task hit (a bad cast, an overflow) in ``TASK_WRITE_FAILED`` and a job abort, whose
    messages do not say what failed: the Java exception's cause chain does."""
    throwable = _java_throwable(error)
    lines: list[str] = []
    cause = _cause_of(throwable)
    while cause is not None and len(lines) < _MAX_CAUSES:
        line = first_line(_throwable_text(cause))
        if line:
            lines.append(line)
        cause = _cause_of(cause)
    classed = [line for line in lines if _ERROR_CLASS.match(line)]
    found = classed or lines
    return found[-1] if found else None


def first_line_with_cause(error: BaseException) -> str:
    """``first_line(error)``, and when that says only that a task or a job failed, what made it
    fail (``root_cause``): ``[TASK_WRITE_FAILED] Task failed while writing rows to ...; caused
    by: [CAST_INVALID_INPUT] The value 'ten' ...``."""
    return with_root_cause(first_line(error), error)


def with_root_cause(line: str, error: BaseException) -> str:
    """``line`` (a message of ``error``), with ``error``'s root cause appended when ``line`` says
    only that a task or a job failed."""
    if not any(wrapper in line for wrapper in _WRAPPERS):
        return line
    try:
        cause = root_cause(error)
    except Exception:  # the JVM is gone or cannot tell: the error's own line stands
        return line
    if cause is None or cause in line:
        return line
    return f"{line}; caused by: {cause}"


def _java_throwable(error: BaseException) -> object | None:
    """The JVM Throwable behind ``error``: pyspark's captured exception keeps it as
    ``_origin``; a Py4J error as ``java_exception`` (the oldest one on the chain)."""
    chain: list[BaseException] = []
    seen: BaseException | None = error
    while seen is not None and seen not in chain:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    for one in chain:
        origin = getattr(one, "_origin", None)
        if origin is not None:
            return origin
    java_errors = [e for e in chain if _is_instance(e, "py4j.protocol", "Py4JJavaError")]
    return java_errors[-1].java_exception if java_errors else None  # type: ignore[attr-defined]


def _cause_of(throwable: object | None) -> object | None:
    if throwable is None:
        return None
    cause = throwable.getCause()  # type: ignore[attr-defined]
    return None if cause is None or cause == throwable else cause


def _throwable_text(throwable: object) -> str:
    message = throwable.getMessage()  # type: ignore[attr-defined]
    return str(message) if message else str(throwable.toString())  # type: ignore[attr-defined]


def _is_instance(error: BaseException, module: str, name: str) -> bool:
    loaded = sys.modules.get(module)
    kind = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(kind, type) and isinstance(error, kind)
