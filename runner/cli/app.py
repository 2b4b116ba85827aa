"""The `runner` command line: one thin module per command, registered here."""

from __future__ import annotations

import typer

from runner.cli.cluster import cluster_app
from runner.cli.compile import compile_models
from runner.cli.docs import docs_app
from runner.cli.history import history
from runner.cli.lint import lint
from runner.cli.seed import seed
from runner.cli.show import show
from runner.cli.stream import run, stream
from runner.cli.test import run_tests

app = typer.Typer(
    name="runner",
    help="SQL-first streaming upserts into Delta Lake: Jinja SQL models run per micro-batch.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command()(stream)
app.command()(run)
app.command()(history)
app.command()(show)
app.command("compile")(compile_models)
app.command()(lint)
app.command()(seed)
app.command("test")(run_tests)
app.add_typer(cluster_app, name="cluster")
app.add_typer(docs_app, name="docs")


def main() -> None:
    app()
