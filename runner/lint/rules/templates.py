"""Lint rules about a model's template: unknown names, and models that do not render.

They read the Jinja syntax tree (``jinja_scan``) and the errors of loading and rendering.
"""

from __future__ import annotations

from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import ModelContext
from runner.lint.jinja_scan import NOT_CONST, context_names
from runner.model_sql import relative_location
from runner.project import Project


class UnknownReference(Rule):
    """The model names a model (`ref`), stream or macro that does not exist.

    Found in the Jinja syntax tree, so every unknown name is reported at its line, not only the
    first one rendering stops at. Names a model may use: its context (`config`, `this`, `batch`,
    `batch_id`, `var`, `ref`, ...), built-in and project macros, and what it defines itself.
    """

    spark_rejects = True
    code = "DL007"
    severity = ERROR
    explains = frozenset({"DL010"})  # the render / parse failure it causes

    def check(self, context: ModelContext) -> list[Violation]:
        project = context.project
        found = []
        models = set(project.models) | {f.stem for f in project.model_errors}
        for call in context.scan.calls_of("ref"):
            name = call.args[0] if call.args else NOT_CONST
            if isinstance(name, str) and name not in models:
                where = context.locate_line(call.line, name)
                known = ", ".join(sorted(models)) or "(none)"
                found.append(
                    self.violation(
                        context, where, f"ref('{name}'): no such model (models: {known})"
                    )
                )
        stream = context.scan.config_value("stream")
        if isinstance(stream, str) and stream not in project.streams:
            line = context.scan.config_line("stream") or 1
            known = ", ".join(sorted(project.streams)) or "(none)"
            message = f"config(stream='{stream}'): no such stream (streams: {known})"
            found.append(self.violation(context, context.locate_line(line, stream), message))
        known_names = context_names() | set(project.templates.macro_names)
        reported: set[tuple[str, int]] = set()
        for use in context.scan.names:
            if use.name in known_names or (use.name, use.line) in reported:
                continue
            reported.add((use.name, use.line))
            kind = "macro" if use.called else "name"
            message = f"unknown {kind} '{use.name}'"
            found.append(self.violation(context, context.locate_line(use.line, use.name), message))
        return found

    def check_project(self, project: Project) -> list[Violation]:
        """A stream whose ``ref:`` names no model: `runner compile` and `runner stream` stop
        at load on it, so lint reports it at the stream's line."""
        models = set(project.models) | {f.stem for f in project.model_errors}
        found = []
        for stream in project.streams.values():
            if stream.ref and stream.ref not in models:
                known = ", ".join(sorted(models)) or "(none)"
                found.append(
                    Violation(
                        path=relative_location(stream.file, project.root),
                        line=stream.line or 1,
                        col=1,
                        code=self.code,
                        message=f"stream '{stream.name}': ref: {stream.ref} names no model "
                        f"(models: {known})",
                        severity=self.severity,
                        rule=type(self).__name__,
                    )
                )
        return found


class ModelDoesNotRender(Rule):
    """The model fails to load or render: Jinja syntax, `config()`, a missing var, a macro error.

    Reported at the model line the template error names. A failure another rule explains on
    that line (an unknown ref, stream or macro: DL007; a CDC column that is not there: DL020,
    DL021) is reported once, by that rule. Disabling or suppressing it (`-- noqa: DL007`)
    brings this finding back: a model that does not render is never hidden.
    """

    spark_rejects = True
    code = "DL010"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        errors = [context.load_error] if context.load_error else []
        found = []
        for error in [*errors, *context.render_errors]:
            line = error.line if error.line and error.file == context.file else 1
            where_text = f" ({error.detail})" if error.detail else ""
            message = f"{error.message}{where_text}"
            found.append(self.violation(context, context.locate_line(line), message))
        return found
