"""The Jinja environment: model templates, built-in macros and project macros over them.

Every macro is callable by name from every model and macro. A project macro with the name of a
built-in one replaces it, so a project can change how ``dedupe`` or ``optimize`` compile.
Rendering errors become TemplateError naming the model file and line (and the macro's, when the
error is inside one).
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes

from runner.errors import TemplateError, TemplateRaise
from runner.templating.code_cache import template_code_cache
from runner.templating.macro_modules import MacroModules, defines_only_macros
from runner.templating.sourcemap import RenderedSql, add_line_markers, strip_line_markers

BUILTIN_MACRO_DIR = Path(__file__).resolve().parent.parent / "macros"


@dataclass(frozen=True)
class _Source:
    text: str
    file: Path
    is_model: bool


@dataclass(frozen=True)
class _MacroOutline:
    """What registering a macro file needs from its parse: the macros it defines, in order, and
    whether its top level is macro definitions only (``defines_only_macros``)."""

    names: tuple[str, ...]
    static: bool


# Outlines by (file, text): parsing the built-in macro files was most of what loading a project
# cost, paid again by every load in a process that loads more than once (the test suite runs
# the CLI in-process, hundreds of loads). Every environment parses with the same syntax, so a
# file's outline depends only on its text; an edited file has another key. Failed parses are not
# kept.
_OUTLINES: dict[tuple[str, str], _MacroOutline] = {}
_MAX_OUTLINES = 256


def _macro_outline(
    env: jinja2.Environment, template_name: str, file: Path, text: str
) -> _MacroOutline:
    key = (str(file), text)
    outline = _OUTLINES.get(key)
    if outline is not None:
        return outline
    try:
        tree = env.parse(text, name=template_name, filename=str(file))
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(
            f"Jinja syntax error in macro file: {exc.message}", file=file, line=exc.lineno
        ) from exc
    names = tuple(macro.name for macro in tree.find_all(nodes.Macro))
    outline = _MacroOutline(names, defines_only_macros(tree))
    if len(_OUTLINES) >= _MAX_OUTLINES:
        _OUTLINES.clear()
    _OUTLINES[key] = outline
    return outline


class TemplateEnvironment:
    """Compiles templates once and renders them with a context per call."""

    def __init__(self, project_macro_files: list[Path], keep_compiled: bool = False) -> None:
        """``keep_compiled``: keep compiled templates between runs (code_cache.py)."""
        self._sources: dict[str, _Source] = {}
        self._macro_templates: list[str] = []
        self._macro_files_static: list[bool] = []  # per macro file: defines only macros
        self.macro_names: dict[str, Path] = {}  # macro name -> file that defines it (last wins)
        options: dict[str, Any] = {
            "undefined": jinja2.StrictUndefined,
            "keep_trailing_newline": True,
            "autoescape": False,
        }
        self._env = jinja2.Environment(
            loader=jinja2.FunctionLoader(self._load),
            bytecode_cache=template_code_cache(options) if keep_compiled else None,
            **options,
        )
        builtin_files = sorted(BUILTIN_MACRO_DIR.glob("*.sql"))
        for file in [*builtin_files, *sorted(project_macro_files)]:
            self._add_macro_file(file)
        self._macros = MacroModules(
            self._env, self._macro_templates, self._macro_files_static, list(self.macro_names)
        )

    # -- registration -----------------------------------------------------------------------

    def add_model(self, name: str, file: Path, source: str) -> str:
        """Register a model template; returns the template name to render it by."""
        template_name = f"model:{name}"
        self._sources[template_name] = _Source(add_line_markers(source), file, is_model=True)
        return template_name

    def _add_macro_file(self, file: Path) -> None:
        template_name = f"macro:{file}"
        text = file.read_text(encoding="utf-8")
        self._sources[template_name] = _Source(text, file, is_model=False)
        outline = _macro_outline(self._env, template_name, file, text)
        for name in outline.names:
            self.macro_names[name] = file
        self._macro_templates.append(template_name)
        self._macro_files_static.append(outline.static)

    def _load(self, template_name: str) -> tuple[str, str, Any] | None:
        source = self._sources.get(template_name)
        if source is None:
            return None
        return source.text, str(source.file), lambda: True

    # -- rendering ---------------------------------------------------------------------------

    def render(self, template_name: str, context: Mapping[str, Any]) -> RenderedSql:
        """Render a model with ``context`` plus every macro; map errors to file and line."""
        source = self._sources[template_name]
        try:
            with self._macros.bound(context) as full_context:
                template = self._env.get_template(template_name)
                output = template.render(full_context)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a located TemplateError
            raise self._located_error(exc, source.file) from exc
        return strip_line_markers(output)

    def render_macro(self, name: str, context: Mapping[str, Any], *args: Any, **kwargs: Any) -> str:
        """Call one macro by name (used for runner-generated set-up and maintenance SQL)."""
        if name not in self.macro_names:
            raise TemplateError(f"no macro named '{name}'")
        try:
            with self._macros.bound(context) as full_context:
                return str(full_context[name](*args, **kwargs))
        except Exception as exc:  # noqa: BLE001
            raise self._located_error(exc, self.macro_names[name]) from exc

    def _located_error(self, exc: Exception, file: Path) -> TemplateError:
        if isinstance(exc, TemplateError):
            # raised by a context function (ref(), config()) with no line: the model's line
            # that called it, so `compile` and `lint` point at the call
            if exc.line is None and exc.file in (None, file):
                model_lines = [line for where, line in self._template_frames(exc) if where == file]
                if model_lines:
                    exc.file, exc.line = file, model_lines[-1]
            return exc
        if isinstance(exc, jinja2.TemplateSyntaxError):
            where = Path(exc.filename) if exc.filename else file
            return TemplateError(f"Jinja syntax error: {exc.message}", file=where, line=exc.lineno)
        frames = self._template_frames(exc)
        model_frames = [f for f in frames if f[0] == file]
        line = model_frames[-1][1] if model_frames else None
        message = _describe(exc)
        detail = None
        if frames and frames[-1][0] != file:
            macro_file, macro_line = frames[-1]
            detail = f"raised in {macro_file}:{macro_line}"
        return TemplateError(message, file=file, line=line, detail=detail)

    def _template_frames(self, exc: BaseException) -> list[tuple[Path, int]]:
        """(file, line) of every traceback frame that is in one of our templates."""
        known = {str(s.file): s.file for s in self._sources.values()}
        return [
            (known[frame.filename], frame.lineno or 0)
            for frame in traceback.extract_tb(exc.__traceback__)
            if frame.filename in known
        ]


def _describe(exc: Exception) -> str:
    if isinstance(exc, jinja2.UndefinedError):
        return f"undefined name in template: {exc.message}"
    if isinstance(exc, TemplateRaise):
        return str(exc)
    return f"template failed: {type(exc).__name__}: {exc}"
