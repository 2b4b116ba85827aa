"""Lint rules about the CDC macros' column arguments (merge(), scd2()): a column named in
``sequence_by`` or ``track_history_on`` / ``track_history_except`` that is not there fails every
batch at run time, so lint says so first, at the argument's line."""

from __future__ import annotations

from runner.ddl import column_names
from runner.errors import RunnerError
from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import ModelContext
from runner.specs.stream import StreamSpec

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
    explains = frozenset({"DL010"})  # the render / parse failure it causes

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
    explains = frozenset({"DL010"})  # the render / parse failure it causes

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


# merge() arguments that make a row keep the values of the event that inserted it
_FIRST_EVENT_ARGUMENTS = {
    "mode": "with mode='{value}' a row keeps the event that inserted it (insert_only) or "
    "loses the events after a delete (update_only)",
    "update_columns": "columns left out of update_columns keep the inserting event's values",
    "exclude_columns": "exclude_columns keep the inserting event's values",
}


class MergeDependsOnBatching(Rule):
    """A `merge()` option makes the target depend on how events fall into micro-batches.

    The rule of docs/macros/merge.md: the same events give the same table however they are
    cut into batches. `mode='insert_only'` / `'update_only'`, `update_columns` and
    `exclude_columns` keep, for some columns or keys, the values of the event that inserted
    the row: one batch holding two events of a new key inserts the newer one, two batches
    insert the older one and then leave those columns alone. Use `except_columns` for columns
    never written; or, when each key's events come one per batch, or the difference is what
    you want, say so with `-- noqa: DL022` (or `lint: severity: {DL022: warning}`).
    """

    code = "DL022"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for call in context.scan.calls_of("merge"):
            for key, why in _FIRST_EVENT_ARGUMENTS.items():
                if key not in call.kwargs:
                    continue
                value, line = call.kwargs[key]
                # a computed argument may be anything: only constants are judged
                if key == "mode" and value not in ("insert_only", "update_only"):
                    continue
                if key != "mode" and not (isinstance(value, list | tuple | str) and value):
                    continue
                message = (
                    f"merge({key}=...): the target depends on how events fall into batches: "
                    f"{why.format(value=value)}; see docs/macros/merge.md (the same events, "
                    "the same table)"
                )
                found.append(self.violation(context, context.locate_line(line, key), message))
        return found
