"""Lint rules about the CDC macros' column arguments (merge(), scd2()): a column named in
``sequence_by`` or ``track_history_on`` / ``track_history_except`` that is not there fails every
batch at run time, so lint says so first, at the argument's line."""

from __future__ import annotations

from runner.config import StreamSpec
from runner.ddl import column_names
from runner.errors import RunnerError
from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import ModelContext

CDC_MACROS = ("merge", "scd2")


def _names(value: object) -> list[str]:
    """The column names of a constant argument ('a' or ['a', 'b']); [] when computed."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value)
    return []


def _stream(context: ModelContext) -> StreamSpec | None:
    """The model's stream, from its config() even when the model failed to load (a macro that
    raised while loading is exactly when these rules have something to say)."""
    name = context.scan.config_value("stream")
    return context.project.streams.get(name) if isinstance(name, str) else None


def _target_columns(context: ModelContext) -> set[str]:
    """config(columns=...) or else the stream's columns; empty when not known statically."""
    declared = context.scan.config_value("columns")
    if isinstance(declared, str):
        return _lower_set(declared)
    stream = _stream(context)
    return _lower_set(context.project.stream_columns_ddl(stream)) if stream else set()


def _lower_set(ddl: str | None) -> set[str]:
    if not ddl:
        return set()
    try:
        return {c.strip("`").lower() for c in column_names(ddl)}
    except RunnerError:
        return set()


class SequenceColumnNotInStream(Rule):
    """A `sequence_by` column (of `config()`, `merge()` or `scd2()`) is not in the stream.

    The sequence orders the versions of a key, so it must come with every event; a name the
    stream's declared schema lacks fails the first batch. Streams without a static schema
    (Kafka values parsed in the model) are not checked.
    """

    code = "DL020"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        stream = _stream(context)
        if stream is None:
            return []
        columns = _lower_set(context.project.stream_columns_ddl(stream))
        if not columns:
            return []
        found = []
        places = [call for name in ("config", *CDC_MACROS) for call in context.scan.calls_of(name)]
        for call in places:
            if "sequence_by" not in call.kwargs:
                continue
            value, line = call.kwargs["sequence_by"]
            for column in _names(value):
                if column.lower() not in columns:
                    message = (
                        f"sequence_by '{column}' is not a column of stream '{stream.name}' "
                        f"({', '.join(sorted(columns))})"
                    )
                    found.append(
                        self.violation(context, context.locate_line(line, column), message)
                    )
        return found


class TrackHistoryColumnNotInTarget(Rule):
    """A `track_history_on` / `track_history_except` column of `scd2()` is not in the target.

    Only target columns can change from one version to the next; a name the target lacks is a
    typo that would make scd2() fail every batch.
    """

    code = "DL021"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        columns = _target_columns(context)
        target = context.scan.config_value("target")
        if not columns:
            return []
        found = []
        for call in context.scan.calls_of("scd2"):
            for key in ("track_history_on", "track_history_except"):
                if key not in call.kwargs:
                    continue
                value, line = call.kwargs[key]
                for column in _names(value):
                    if column.lower() not in columns:
                        message = (
                            f"{key} '{column}' is not a column of {target} "
                            f"({', '.join(sorted(columns))})"
                        )
                        where = context.locate_line(line, f"'{column}'")
                        found.append(self.violation(context, where, message))
        return found
