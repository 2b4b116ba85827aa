"""The formats ``runner lint`` writes its findings in (``--format``); see ``report.py``."""

from __future__ import annotations

from typing import Literal, get_args

OutputFormat = Literal["text", "json", "github", "sarif"]
FORMATS: tuple[OutputFormat, ...] = get_args(OutputFormat)
