"""Lint findings as SARIF 2.1.0, the format GitHub code scanning uploads
(``runner lint --format sarif > lint.sarif``; then ``github/codeql-action/upload-sarif``).

One run whose tool is ``runner lint``: every rule (its code, name, summary, description, a link
to its entry in docs/compile-and-lint.md and its default level), then one result per finding,
located by a path relative to the project root (``%SRCROOT%``) and its line and column.
"""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from runner.lint.base import ERROR, RuleInfo
from runner.lint.docs import rule_anchor
from runner.lint.findings import LintResult
from runner.lint.rules import all_rules, analysis_rules

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
# The rules' documentation, in the repository of the runner (a relative reference: the runner
# has no published docs site yet)
RULES_DOC = "docs/compile-and-lint.md"


def format_sarif(result: LintResult) -> str:
    """The SARIF log of ``result`` as indented JSON, ending with a newline."""
    rules: list[type[RuleInfo]] = [*all_rules(), *analysis_rules()]
    index = {rule.code: i for i, rule in enumerate(rules)}
    results = []
    for v in result.violations:
        entry: dict[str, Any] = {
            "ruleId": v.code,
            "level": _level(v.severity),
            "message": {"text": v.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": v.path, "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": v.line, "startColumn": max(v.col, 1)},
                    }
                }
            ],
        }
        if v.code in index:  # DL000 (a linter failure) is no rule
            entry["ruleIndex"] = index[v.code]
        results.append(entry)
    log = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "runner lint",
                        "version": _runner_version(),
                        "rules": [_descriptor(rule) for rule in rules],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": result.root.as_uri() + "/"}},
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"


def _descriptor(rule: type[RuleInfo]) -> dict[str, Any]:
    description = rule.description()
    return {
        "id": rule.code,
        "name": rule.name(),
        "shortDescription": {"text": rule.summary()},
        "fullDescription": {"text": description or rule.summary()},
        "help": {"text": description or rule.summary(), "markdown": description or rule.summary()},
        "helpUri": f"{RULES_DOC}#{rule_anchor(rule)}",
        "defaultConfiguration": {"level": _level(rule.severity)},
    }


def _level(severity: str) -> str:
    return "error" if severity == ERROR else "warning"


def _runner_version() -> str:
    try:
        return version("delta-stream-runner")
    except PackageNotFoundError:
        return "0"
