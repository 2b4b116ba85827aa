"""Options shared by every command, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

ProjectDir = Annotated[
    Path,
    typer.Option(
        "--project-dir",
        "-p",
        help="Directory holding project.yml. Example: --project-dir ./analytics",
        show_default=True,
    ),
]
Target = Annotated[
    str | None,
    typer.Option(
        "--target",
        "-t",
        help="Target from project.yml's targets (default: its default_target). Example: -t local",
    ),
]
Vars = Annotated[
    str | None,
    typer.Option(
        "--vars",
        help="Values for var() as YAML or JSON, over project.yml's vars. "
        "Example: --vars '{delete_op: X}'",
    ),
]
ModelName = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        help="Model to run: a file name in models/ without .sql. Example: --model orders_merge",
    ),
]
Debug = Annotated[
    bool,
    typer.Option("--debug", help="Show the full Python traceback when a command fails."),
]
Select = Annotated[
    list[str] | None,
    typer.Option(
        "--select",
        "-s",
        help="Models by dbt-style selector: a name, tag:NAME, +NAME (with everything upstream), "
        "NAME+ (with everything downstream); repeat it or separate with commas. "
        "Example: --select orders_merge+",
    ),
]


def selected_models(select: list[str] | None) -> list[str] | None:
    """``--select a,b --select c`` -> ``['a', 'b', 'c']``; None when nothing was selected.
    For plain names (seeds); models take dbt-style selectors (runner/selection.py)."""
    names = [name.strip() for item in select or [] for name in item.split(",") if name.strip()]
    return names or None
