"""`runner compile`: write the SQL each model will run to target/compiled/ (no JVM)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from runner.cli.errors import reported_errors
from runner.cli.options import Debug, Exclude, ProjectDir, Select, State, Target, Vars

if TYPE_CHECKING:  # imported where used: `runner --help` and `runner lint` load only their own
    from runner.project import Project


def compile_models(
    select: Select = None,
    exclude: Exclude = None,
    state: State = None,
    batch_id: Annotated[
        int,
        typer.Option(
            "--batch-id",
            "-b",
            min=0,
            help="Render the per-batch statements of this micro-batch. Example: --batch-id 3",
        ),
    ] = 0,
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    debug: Debug = False,
) -> None:
    """Write each model's set-up, per-batch and maintenance SQL to target/compiled/, plus a
    manifest.json. The files are byte-identical across runs and machines, for review and CI.

    Example: runner compile --select orders_merge --batch-id 1
    """
    from runner.artifacts import project_path, write_compiled
    from runner.cli.options import parse_vars
    from runner.cli.progress import console
    from runner.project import load
    from runner.selection import select_models

    with reported_errors(debug):
        # With --select, another model's Jinja error does not stop the selected ones.
        project = load(project_dir, target, parse_vars(vars), tolerate_model_errors=bool(select))
        broken = {file.stem for file in project.model_errors}
        names = (
            select_models(project, select, exclude=exclude, state=state, elsewhere=broken)
            if select or exclude
            else None
        )
        if select:
            _raise_for_selected_broken_models(project, select, names or [])
        written = write_compiled(project, names, batch_id)
        for path in written:
            console.print(f"wrote {project_path(project, path)}")


def _raise_for_selected_broken_models(
    project: Project, select: list[str], selected: list[str]
) -> None:
    """The load error of a model that does not load and is selected by name, or that a
    selected model refs."""
    from runner.selection import mentioned_names

    broken = {file.stem: error for file, error in project.model_errors.items()}
    for term in sorted(mentioned_names(select)):
        if term in broken:
            raise broken[term]
    for name in selected:
        for other in project.models[name].refs:
            if other in broken:
                raise broken[other]
