"""`runner debug`: check Java, the jar cache, the target and its storage (no JVM)."""

from __future__ import annotations

from pathlib import Path

import typer

from runner.cli.errors import EXIT_FAILURE, reported_errors
from runner.cli.options import Debug, ProjectDir, Target, Vars


def debug(
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    debug: Debug = False,
) -> None:
    """Check that this machine can run the project: the project loads, Java's version, Delta's
    jars in the cache, the target (local, or a cluster / Connect server that answers), and
    that the warehouse and checkpoint paths are writable. One line per check, with what to do
    when it fails; exit 1 when one fails. Starts no JVM.

    Example: runner debug --target cluster
    """
    from rich.text import Text

    from runner.cli.debug_checks import run_checks
    from runner.cli.options import parse_vars
    from runner.cli.progress import console
    from runner.project import load

    with reported_errors(debug):
        project = load(project_dir, target, parse_vars(vars))
    models = len(project.models)
    console.print(
        f"project {project.name}: {project.root / 'project.yml'} loads, "
        f"{models} model{'' if models == 1 else 's'}"
    )
    checks = run_checks(project)
    for check in checks:
        label = ("ok  ", "green") if check.ok else ("FAIL", "red")
        line = Text.assemble(label, f" {check.name}: {check.found}")
        if not check.ok and check.fix:
            line.append(f"\n     to fix: {check.fix}", style="yellow")
        console.print(line)
    failed = [c.name for c in checks if not c.ok]
    if failed:
        console.print(f"{len(failed)} check(s) failed: {', '.join(failed)}")
        raise typer.Exit(EXIT_FAILURE)
    console.print("all checks passed.")
