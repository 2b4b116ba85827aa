"""`runner docs generate` / `runner docs serve`: a static site of the project under target/docs/."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from runner.cli.errors import reported_errors
from runner.cli.options import Debug, ProjectDir, Target, Vars

if TYPE_CHECKING:  # imported where used: `runner --help` and `runner lint` load only their own
    from runner.docs_site import History
    from runner.project import Project

docs_app = typer.Typer(
    help="A static site of the project: lineage graph, SQL, config, tests, batch history. "
    "Example: runner docs generate",
    no_args_is_help=True,
)


@docs_app.command()
def generate(
    with_history: Annotated[
        bool,
        typer.Option(
            "--with-history",
            help="Also chart each model's last batches from the event log (starts Spark). "
            "Example: runner docs generate --with-history",
        ),
    ] = False,
    batches: Annotated[
        int,
        typer.Option(
            "--batches",
            "-n",
            min=1,
            help="With --with-history: how many recent batches per model. Example: -n 50",
        ),
    ] = 30,
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    vars: Vars = None,
    debug: Debug = False,
) -> None:
    """Write target/docs/index.html: open it in a browser straight from disk (no server).

    Example: runner docs generate && xdg-open target/docs/index.html
    """
    from runner.artifacts import project_path
    from runner.cli.options import parse_vars
    from runner.cli.progress import console
    from runner.docs_site import generate_docs
    from runner.project import load

    with reported_errors(debug):
        project = load(project_dir, target, parse_vars(vars))
        history = read_history(project, batches) if with_history else None
        index = generate_docs(project, history)
        console.print(f"wrote {project_path(project, index)} ({len(project.models)} models)")
        if history is not None:
            counted = ", ".join(f"{m} {len(rows)}" for m, rows in sorted(history.items()))
            console.print(f"history: batches per model: {counted}")


def read_history(project: Project, batches: int) -> History:
    """The last ``batches`` event-log rows of every model, as plain dicts (Spark)."""
    from runner.spark.batch.eventlog import read_history as read_rows
    from runner.spark.streaming.pipeline import session_for

    spark = session_for(project, [])
    return {
        name: [
            _plain(row.asDict(recursive=True))
            for row in read_rows(spark, project.target, name, batches)
        ]
        for name in sorted(project.models)
    }


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in row.items()}


@docs_app.command()
def serve(
    port: Annotated[
        int,
        typer.Option(
            "--port",
            help="Port on 127.0.0.1; 0 picks a free one. Example: runner docs serve --port 8080",
        ),
    ] = 8080,
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    debug: Debug = False,
) -> None:
    """Serve target/docs/ on 127.0.0.1 until Ctrl-C (the page also opens without a server).

    Example: runner docs serve --port 8080
    """
    import http.server

    from runner.artifacts import project_path
    from runner.cli.progress import console
    from runner.docs_site import docs_dir
    from runner.errors import ConfigError
    from runner.project import load

    with reported_errors(debug):
        project = load(project_dir, target)
        root = docs_dir(project)
        if not (root / "index.html").exists():
            raise ConfigError(
                f"no docs at {project_path(project, root)}", hint="run `runner docs generate` first"
            )
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
        with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
            address = f"http://127.0.0.1:{server.server_port}/"
            console.print(f"serving {project_path(project, root)} at {address} (Ctrl-C stops)")
            try:
                server.serve_forever()
            except KeyboardInterrupt:
                console.print("stopped.")
