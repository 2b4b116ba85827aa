"""Error types. Each carries where the problem is (file and line) and what to do next.

The CLI's one error handler prints ``str(error)``; nothing else formats errors.
"""

from __future__ import annotations

from pathlib import Path


class RunnerError(Exception):
    """Base class: a problem a user can fix, reported without a stack trace."""

    # Set when the error was raised while Spark ran (a batch, a statement): the CLI exits 1
    # then, even for a ConfigError or TemplateError (runner/cli/errors.py).
    while_running: bool = False

    def __init__(
        self,
        message: str,
        *,
        file: Path | str | None = None,
        line: int | None = None,
        hint: str | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = Path(file) if file is not None else None
        self.line = line
        self.hint = hint
        self.detail = detail

    @property
    def location(self) -> str | None:
        if self.file is None:
            return None
        shown = _relative_to_cwd(self.file)
        return f"{shown}:{self.line}" if self.line else str(shown)

    def __str__(self) -> str:
        head = f"{self.location}: {self.message}" if self.location else self.message
        parts = [head]
        if self.detail:
            parts.append(self.detail)
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


def _relative_to_cwd(path: Path) -> Path:
    """Paths under the working directory are shown relative to it, as editors link them."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


class ConfigError(RunnerError):
    """project.yml, a streams/ YAML file or a model's config() is invalid."""


class TemplateError(RunnerError):
    """A model or macro failed to render (Jinja syntax error, undefined name, macro error)."""


class TemplateRaise(Exception):
    """Raised from a template by ``raise_error(...)`` or a context function; the renderer turns
    it into a TemplateError with the template's file and line."""


class ModelSqlError(RunnerError):
    """Spark rejected a statement of a model; carries the statement and its source line."""


class SetupError(RunnerError):
    """The machine lacks something the runner needs (java, mvn, a JAR)."""
