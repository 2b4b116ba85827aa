"""`runner server start|stop|status`: the project's local Spark Connect server, which commands
on a local[...] target use instead of starting a JVM each (runner/spark/session/local_server.py).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from runner.cli.errors import EXIT_FAILURE, reported_errors
from runner.cli.options import Debug, ProjectDir, Target

server_app = typer.Typer(
    help="A Spark Connect server on 127.0.0.1 for the project's local target: while it runs, "
    "show, test, history, seed, run and build use it instead of starting a JVM each (seconds "
    "instead of half a minute). Example: runner server start, then runner show -m orders_merge",
    no_args_is_help=True,
    add_completion=False,
)


@server_app.command()
def start(
    port: Annotated[
        int, typer.Option(help="The server's port; 0 picks a free one. Example: --port 15002")
    ] = 0,
    project_dir: ProjectDir = Path("."),
    target: Target = None,
    debug: Debug = False,
) -> None:
    """Start the local server for a local[...] target (default: project.yml's default_target)
    with the target's master, warehouse and spark_conf, Delta and the jars the models need;
    write its address and PID to target/server/. It runs until `runner server stop`.

    Example: runner server start --target local
    """
    from runner.cli.progress import console
    from runner.project import load

    with reported_errors(debug):
        from runner.spark.session.local_server import LocalServer, check_serves

        project = load(project_dir, target)
        check_serves(project.target)  # before pyspark is imported and jars are resolved
        from runner.spark.session.builder import session_conf
        from runner.spark.streaming.pipeline import extra_jars_for

        jars = extra_jars_for(project)
        conf = session_conf(project.target, jars)
        started = time.monotonic()
        console.print(
            f"starting a Spark Connect server for target {project.target.name} "
            f"({project.target.master})...",
            highlight=False,
        )
        state = LocalServer(project.root).start(project.target, conf, jars, port)
        console.print(
            f"local server up in {time.monotonic() - started:.0f} s: {state.address}, pid "
            f"{state.pid}; commands on target {state.target} now use it "
            "(--no-server or RUNNER_NO_SERVER=1: in-process; runner server stop: stop it)",
            highlight=False,
        )


@server_app.command()
def stop(project_dir: ProjectDir = Path("."), debug: Debug = False) -> None:
    """Stop the local server (SIGTERM, then SIGKILL after 20 s) and remove its PID file.

    Example: runner server stop
    """
    from runner.cli.progress import console
    from runner.spark.session.local_server import LocalServer

    with reported_errors(debug):
        pid = LocalServer(project_dir).stop()
        console.print(f"stopped the local server (pid {pid})" if pid else "no local server ran")


@server_app.command()
def status(project_dir: ProjectDir = Path("."), debug: Debug = False) -> None:
    """Whether the local server runs: PID, address, target, log. Exit code 1 when it does not.

    Example: runner server status
    """
    from runner.cli.progress import console
    from runner.spark.session.local_server import LocalServer

    with reported_errors(debug):
        up, line = LocalServer(project_dir).status()
        console.print(line, highlight=False)
        if not up:
            raise typer.Exit(EXIT_FAILURE)
