"""The linter: render each model for representative batches, parse, run the rules, and apply
project.yml's ``lint:`` settings and ``-- noqa`` comments. Pure Python: no pyspark import.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from sqlglot.errors import ParseError, TokenError

from runner.error_text import first_line
from runner.errors import ConfigError, RunnerError
from runner.lint.analyze import Analyzer, analysis_violations, plan_analysis
from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import ModelContext, ParsedStatement
from runner.lint.findings import LintResult
from runner.lint.jinja_scan import scan_template
from runner.lint.rules import all_rules, analysis_rules
from runner.lint.two_processes import in_two_processes
from runner.logs import logger_level
from runner.model_sql import CompiledStatement, compile_batch, compile_setup, relative_location
from runner.project import Project, load
from runner.selection import mentioned_names, select_models
from runner.specs.lint import LintSettings
from runner.specs.model import ModelSpec
from runner.sql.dialect import parse_statement

# SQL -> its parse tree and that tree's nodes, or its parse error: batches with the same SQL
# are parsed (and their trees walked) once.
ParseCache = dict[str, tuple[Any, tuple[Any, ...], ParseError | TokenError | None]]

# `-- noqa`, `-- noqa: DL003`, `-- noqa: DL003, DL009`. Not in a `{# #}` comment: a line that
# ends with a Jinja tag maps to the next line in rendered SQL, so it would suppress the wrong line.
INTERNAL_CODE = "DL000"  # a rule or the renderer failed unexpectedly on one model

_NOQA = re.compile(r"--\s*noqa\b(?::\s*(?P<codes>[A-Za-z0-9_,\s]+))?", re.IGNORECASE)


def lint_project(
    root: Path | str,
    target: str | None = None,
    cli_vars: Mapping[str, Any] | None = None,
    select: list[str] | None = None,
    *,
    analyzer: Analyzer | None = None,
    exclude: list[str] | None = None,
    state: Path | None = None,
) -> LintResult:
    """Load the project at ``root`` (tolerating broken models, which become findings) and lint
    it. Raises ConfigError for problems of project.yml and streams/, which stop everything."""
    started = time.perf_counter()
    project = load(root, target, cli_vars, tolerate_model_errors=True)
    return lint_loaded(
        project, select, started=started, analyzer=analyzer, exclude=exclude, state=state
    )


def lint_loaded(
    project: Project,
    select: list[str] | None = None,
    *,
    started: float | None = None,
    analyzer: Analyzer | None = None,
    exclude: list[str] | None = None,
    state: Path | None = None,
) -> LintResult:
    """Lint the selected models. With ``analyzer`` (``runner lint --analyze`` passes the Spark
    one), their statements also go through Spark's analyzer; its findings are rules DL100 and
    DL101, so severity, ``disable`` and ``-- noqa`` apply to them as to any rule."""
    started = time.perf_counter() if started is None else started
    rules = active_rules(project.lint)
    files = _model_files(project, select, exclude, state)
    violations: set[Violation] = set()
    statements = 0
    if analyzer is None:
        # each model's findings depend on it and the loaded project only: two processes
        for found, counted in in_two_processes(partial(_lint_files, project, rules), files):
            violations.update(found)
            statements += counted
    else:
        cache: ParseCache = {}
        with _quiet_sqlglot():
            contexts = [_safe_context(project, file, cache) for file in files]
        plans = [plan for plan in map(plan_analysis, contexts) if plan is not None]
        analysis = analysis_violations(contexts, analyzer(project, plans))
        with _quiet_sqlglot():
            for context in contexts:
                statements += sum(1 for _ in context.statements())
                violations.update(
                    _check_context(project, context, rules, analysis.get(context.file, []))
                )
    if not select:
        for rule, severity in rules:
            for violation in rule.check_project(project):
                violations.add(replace(violation, severity=severity))
    return LintResult(
        root=project.root,
        violations=tuple(sorted(violations)),
        models=len(files),
        statements=statements,
        seconds=time.perf_counter() - started,
    )


def _lint_files(
    project: Project, rules: list[tuple[Rule, str]], files: list[Path]
) -> tuple[list[Violation], int]:
    """The findings of the rules in ``files`` and how many statements they hold."""
    cache: ParseCache = {}
    found: list[Violation] = []
    statements = 0
    with _quiet_sqlglot():
        for file in files:
            context = _safe_context(project, file, cache)
            statements += sum(1 for _ in context.statements())
            found.extend(_check_context(project, context, rules, []))
    return found, statements


def _check_context(
    project: Project,
    context: ModelContext,
    rules: list[tuple[Rule, str]],
    analysis: list[Violation],
) -> list[Violation]:
    """The rules' findings in one model, and ``analysis`` (from ``--analyze``), after
    project.yml's severities and ``disable`` and the model's ``-- noqa`` comments."""
    found = []
    suppressed = noqa_lines(context.source)
    for rule, severity in rules:
        for violation in _safe_check(rule, context):
            if violation.code == INTERNAL_CODE:
                found.append(violation)  # a linter bug: never suppressed
            elif not _is_suppressed(violation, suppressed):
                found.append(replace(violation, severity=severity))
    for violation in analysis:
        if violation.code in project.lint.disable:
            continue
        if not _is_suppressed(violation, suppressed):
            severity = project.lint.severity.get(violation.code, violation.severity)
            found.append(replace(violation, severity=severity))
    return without_consequences(found, {rule.code: rule.consequences() for rule, _ in rules})


def without_consequences(
    found: list[Violation], explains: Mapping[str, frozenset[str]]
) -> list[Violation]:
    """``found`` without the findings that another finding on the same line explains
    (``Rule.explains``): a stream name typo is DL007's finding, and the render failure it
    causes (DL010) is not reported again. Applied after ``disable`` and ``-- noqa``, so a
    suppressed or disabled cause never hides its consequence (a model that does not render)."""
    causes = {(v.path, v.line, code) for v in found for code in explains.get(v.code, ())}
    return [v for v in found if (v.path, v.line, v.code) not in causes]


def active_rules(settings: LintSettings) -> list[tuple[Rule, str]]:
    """Each enabled rule with its severity after project.yml's overrides."""
    rules = all_rules()
    codes = {rule.code for rule in [*rules, *analysis_rules()]}
    for code in [*settings.severity, *settings.disable]:
        if code not in codes:
            raise ConfigError(
                f"lint: unknown rule code {code}",
                file=settings.file,
                line=settings.lines.get(code),
                hint=f"rule codes: {', '.join(sorted(codes))}",
            )
    return [
        (rule(), settings.severity.get(rule.code, rule.severity))
        for rule in rules
        if rule.code not in settings.disable
    ]


def representative_batches(model: ModelSpec) -> list[int]:
    """The first batch and, when the model has maintenance, the first batch it is due after."""
    every = model.config.optimize_every
    return sorted({0, every - 1}) if every else [0]


def build_context(
    project: Project,
    file: Path,
    cache: ParseCache | None = None,
) -> ModelContext:
    """Render and parse one model file (a loaded model or one that failed to load)."""
    cache = {} if cache is None else cache
    source = file.read_text(encoding="utf-8")
    model = next((m for m in project.models.values() if m.file == file), None)
    context = ModelContext(
        project=project,
        file=file,
        path=relative_location(file, project.root),
        source=source,
        scan=scan_template(source),
        model=model,
        load_error=project.model_errors.get(file),
    )
    if model is None:
        return context
    try:
        setup = compile_setup(project, model, location_root=project.root)
        context.setup = [_parse(s, None, cache) for s in (setup.create_schema, setup.create)]
    except RunnerError as exc:
        context.render_errors.append(exc)
    for batch_id in representative_batches(model):
        try:
            compiled = compile_batch(project, model, batch_id)
        except RunnerError as exc:
            if not any(str(e) == str(exc) for e in context.render_errors):
                context.render_errors.append(exc)
            continue
        context.batches[batch_id] = [_parse(s, batch_id, cache) for s in compiled]
    return context


def _safe_context(project: Project, file: Path, cache: ParseCache) -> ModelContext:
    """``build_context``, or, when it fails unexpectedly, a context holding that failure as a
    render error: one model's text never stops the report for the others."""
    try:
        return build_context(project, file, cache)
    except Exception as exc:  # a bug in rendering or parsing: reported as DL010 for this model
        context = ModelContext(
            project=project,
            file=file,
            path=relative_location(file, project.root),
            source=_read(file),
            scan=scan_template(""),
        )
        context.render_errors.append(
            RunnerError(f"the linter could not process this model ({_describe(exc)})", file=file)
        )
        return context


def _safe_check(rule: Rule, context: ModelContext) -> list[Violation]:
    """The rule's findings; an exception inside a rule becomes an internal-error finding
    (DL000) for this model, naming the rule, instead of a traceback that stops all reporting."""
    try:
        return rule.check(context)
    except Exception as exc:
        message = (
            f"lint rule {rule.code} ({type(rule).__name__}) failed on this model: "
            f"{_describe(exc)}; this is a linter bug, please report it with the model"
        )
        return [Violation(context.path, 1, 1, INTERNAL_CODE, message, ERROR, "InternalError")]


def _describe(exc: BaseException) -> str:
    name, message = type(exc).__name__, first_line(exc)
    return name if message == name else f"{name}: {message}"


def _read(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _parse(
    statement: CompiledStatement,
    batch_id: int | None,
    cache: ParseCache,
) -> ParsedStatement:
    # Parsed trees are shared between batches with identical SQL; rules never modify them.
    if statement.sql not in cache:
        try:
            tree = parse_statement(statement.sql, allow_command=True)
            cache[statement.sql] = (tree, tuple(tree.walk()), None)
        except (ParseError, TokenError) as exc:
            cache[statement.sql] = (None, (), exc)
    expression, nodes, error = cache[statement.sql]
    return ParsedStatement(statement, batch_id, expression, error, nodes)


def _model_files(
    project: Project,
    select: list[str] | None,
    exclude: list[str] | None = None,
    state: Path | None = None,
) -> list[Path]:
    """The files of the selected models (dbt's selectors, runner/selection.py), and of
    models that failed to load when selected by name (or when nothing is selected), since
    those are what lint reports."""
    broken = {f.stem: f for f in project.model_errors}
    if not select and not exclude:
        return sorted([*(m.file for m in project.models.values()), *broken.values()])
    names = select_models(project, select, exclude=exclude, state=state, elsewhere=broken)
    wanted = mentioned_names(select) if select else set(broken)
    wanted -= mentioned_names(exclude)
    return [project.models[name].file for name in names] + [
        broken[name] for name in sorted(wanted) if name in broken
    ]


# -- suppression ---------------------------------------------------------------------------


def noqa_lines(source: str) -> dict[int, frozenset[str] | None]:
    """Line -> codes suppressed on it (None: every code) from ``-- noqa[: CODE, ...]``."""
    found: dict[int, frozenset[str] | None] = {}
    for number, line in enumerate(source.split("\n"), start=1):
        match = _NOQA.search(line)
        if match:
            codes = match.group("codes")
            found[number] = (
                frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c) if codes else None
            )
    return found


def _is_suppressed(violation: Violation, suppressed: dict[int, frozenset[str] | None]) -> bool:
    if violation.line not in suppressed:
        return False
    codes = suppressed[violation.line]
    return codes is None or violation.code in codes


def _quiet_sqlglot() -> AbstractContextManager[None]:
    """sqlglot logs a warning for each statement it parses only as a command; DL011 says so."""
    return logger_level(logging.getLogger("sqlglot"), logging.ERROR)
