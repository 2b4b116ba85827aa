"""`runner plan`: what each selected model would change compared with what it last ran (no JVM)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from runner.cli.errors import reported_errors
from runner.cli.options import (
    Debug,
    Exclude,
    ProjectDir,
    Select,
    State,
    Target,
    TextOrJson,
    Vars,
    check_text_or_json,
)


def plan(
    select: Select = None,
    exclude: Exclude = None,
    state: State = None,
    output_format: TextOrJson = "text",
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    debug: Debug = False,
) -> None:
    """Compare each selected model (default: all) with what it last ran on the target, as
    recorded in its checkpoint at each start, and say what each change means and what to do:
    no change; new (never ran); per-batch logic (SQL, macros, vars, expectations: shows the
    diff of the compiled SQL); target additions (a column, a property); target changes that
    need a rewrite (unique_key, sequence_by, partitioning, clustering, a type that does not
    widen); source changes the checkpoint cannot follow. It also says whether each model is
    safe to replay, and offers only the safe choices (`runner backfill` among them). No JVM.

    Exit 0 when no selected model needs action, 1 when one does, 2 on a usage or project
    configuration error.

    Example: runner plan --select orders_merge+ --format json
    """
    from runner.cli.options import parse_vars
    from runner.plan import plan_models
    from runner.plan_report import exit_code, plan_json, print_plan
    from runner.project import load
    from runner.selection import select_models

    check_text_or_json(output_format)
    with reported_errors(debug):
        project = load(project_dir, target, parse_vars(vars))
        plans = plan_models(project, select_models(project, select, exclude=exclude, state=state))
    if output_format == "json":
        sys.stdout.write(plan_json(plans))  # byte for byte, not through rich
    else:
        from runner.terminal import plain_console

        print_plan(plans, project.target.name, plain_console())
    raise typer.Exit(exit_code(plans))
