"""Lint findings as text (people), JSON (machines), GitHub workflow annotations or SARIF (CI)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from runner.lint.findings import ERROR, LintResult, Violation
from runner.lint.formats import OutputFormat


def display_path(result: LintResult, violation: Violation, cwd: Path | None = None) -> str:
    """The model's path relative to the current directory (where CI and editors resolve it),
    or project-relative when the project is elsewhere."""
    cwd = (cwd or Path.cwd()).resolve()
    absolute = result.root / violation.path
    try:
        return absolute.relative_to(cwd).as_posix()
    except ValueError:
        relative = os.path.relpath(absolute, cwd)
        return Path(relative).as_posix() if not relative.startswith("..") else violation.path


def format_result(result: LintResult, fmt: OutputFormat, cwd: Path | None = None) -> str:
    """The whole report in ``fmt`` (one of FORMATS), ending with a newline when not empty."""
    if fmt == "json":
        return format_json(result, cwd)
    if fmt == "github":
        return format_github(result, cwd)
    if fmt == "sarif":  # paths relative to the project root, as code scanning resolves them
        from runner.lint.sarif import format_sarif

        return format_sarif(result)
    return format_text(result, cwd)


def format_text(result: LintResult, cwd: Path | None = None) -> str:
    lines = [
        f"{display_path(result, v, cwd)}:{v.line}:{v.col}: {v.code} {v.severity}: {v.message}"
        for v in result.violations
    ]
    errors, warnings = len(result.errors), len(result.warnings)
    took = f"{result.seconds:.2f}s" + (", unchanged: from the lint cache" if result.cached else "")
    if result.violations:
        lines.append(
            f"{errors} error(s), {warnings} warning(s) in {result.models} model(s) ({took})"
        )
    else:
        lines.append(f"{result.models} model(s) clean ({took})")
    return "\n".join(lines) + "\n"


def format_json(result: LintResult, cwd: Path | None = None) -> str:
    findings = [
        {
            "file": display_path(result, v, cwd),
            "line": v.line,
            "col": v.col,
            "code": v.code,
            "rule": v.rule,
            "severity": v.severity,
            "message": v.message,
        }
        for v in result.violations
    ]
    summary = {
        "models": result.models,
        "statements": result.statements,
        "errors": len(result.errors),
        "warnings": len(result.warnings),
    }
    return json.dumps({"findings": findings, "summary": summary}, indent=2) + "\n"


def format_github(result: LintResult, cwd: Path | None = None) -> str:
    """``::error file=...,line=...,col=...,title=CODE::message`` per finding."""
    lines = []
    for v in result.violations:
        level = "error" if v.severity == ERROR else "warning"
        path = _escape_property(display_path(result, v, cwd))
        lines.append(
            f"::{level} file={path},line={v.line},col={v.col},title={v.code}::"
            f"{_escape_data(v.message)}"
        )
    return "\n".join(lines) + "\n" if lines else ""


def _escape_data(text: str) -> str:
    # GitHub's workflow-command escaping: % first, then line breaks.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
