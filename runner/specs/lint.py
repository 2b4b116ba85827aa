"""project.yml's ``lint:`` key, as the linter reads it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

# What a lint finding is, by default or as project.yml's `lint: severity:` sets it.
LintSeverity = Literal["error", "warning"]
LINT_SEVERITIES: tuple[LintSeverity, ...] = get_args(LintSeverity)


@dataclass(frozen=True)
class LintSettings:
    """project.yml's ``lint:`` key: per-rule severity overrides and disabled rules."""

    severity: dict[str, LintSeverity] = field(default_factory=dict)  # rule code -> severity
    disable: tuple[str, ...] = ()
    file: Path | None = None  # project.yml, for errors about unknown rule codes
    lines: dict[str, int] = field(default_factory=dict)  # rule code -> line that names it
