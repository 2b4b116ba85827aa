"""`python -m runner_devtools.cluster start|stop|restart|status`: a standalone Spark cluster and a
Spark Connect server on this machine, for trying and testing the cluster targets
(``local_cluster``).

A development tool, not a `runner` command: the product only connects to a cluster."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from runner.cli.errors import reported_errors
from runner.cli.options import Debug, ProjectDir

if TYPE_CHECKING:  # imported where used: `--help` loads only the command line
    from runner_devtools.local_cluster import LocalCluster

cluster_app = typer.Typer(
    help="A local Spark standalone cluster and Spark Connect server (loopback only). "
    "Example: python -m runner_devtools.cluster start --workers 2",
    no_args_is_help=True,
    add_completion=False,
)

Directory = Annotated[
    Path | None,
    typer.Option(
        "--dir",
        help="Where PID files, logs and cluster.json live (default: target/cluster in the "
        "project). Example: --dir /tmp/my-cluster",
    ),
]


def _cluster(project_dir: Path, directory: Path | None) -> LocalCluster:
    from runner_devtools.local_cluster import LocalCluster

    return LocalCluster(directory or project_dir / "target" / "cluster")


@cluster_app.command()
def start(
    workers: Annotated[
        int, typer.Option(help="Number of standalone workers. Example: --workers 2", min=0)
    ] = 1,
    worker_cores: Annotated[
        int, typer.Option(help="Cores each worker offers. Example: --worker-cores 2", min=1)
    ] = 2,
    worker_memory: Annotated[
        str, typer.Option(help="Memory each worker offers. Example: --worker-memory 4g")
    ] = "2g",
    master_port: Annotated[
        int, typer.Option(help="The master's port; 0 picks a free one. Example: --master-port 7077")
    ] = 7077,
    connect: Annotated[
        bool,
        typer.Option(help="Also start a Spark Connect server. Example: --no-connect"),
    ] = True,
    connect_port: Annotated[
        int,
        typer.Option(
            help="The Connect server's port; 0 picks a free one. Example: --connect-port 15002"
        ),
    ] = 15002,
    kafka: Annotated[
        bool,
        typer.Option(
            help="Put Spark's Kafka connector on the Connect server's classpath, for models "
            "that read Kafka over Connect (fetched into the jar cache the first time). "
            "Example: --kafka"
        ),
    ] = False,
    project_dir: ProjectDir = Path("."),
    directory: Directory = None,
    debug: Debug = False,
) -> None:
    """Start a master, N workers and a Spark Connect server on 127.0.0.1, then print the
    targets to put in project.yml. The Connect server is an application of the master: its
    executors (one core) run on the workers.

    Example: python -m runner_devtools.cluster start --workers 2
    """
    from runner.cli.progress import console

    with reported_errors(debug):
        cluster = _cluster(project_dir, directory)
        cluster.start(
            workers=workers,
            worker_cores=worker_cores,
            worker_memory=worker_memory,
            master_port=master_port,
            connect=connect,
            connect_port=connect_port,
            connect_jars=tuple(kafka_connector() if kafka else ()),
        )
        for line in cluster.status():
            console.print(line, highlight=False)
        console.print("targets for project.yml:", highlight=False)
        console.print(f"  cluster:\n    master: {cluster.master_url}", highlight=False)
        if cluster.connect_url:
            console.print(f"  connect:\n    remote: {cluster.connect_url}", highlight=False)


@cluster_app.command()
def stop(
    project_dir: ProjectDir = Path("."), directory: Directory = None, debug: Debug = False
) -> None:
    """Stop every process of the local cluster (SIGTERM, then SIGKILL after 20 s).

    Example: python -m runner_devtools.cluster stop
    """
    from runner.cli.progress import console

    with reported_errors(debug):
        stopped = _cluster(project_dir, directory).stop()
        console.print(f"stopped: {', '.join(stopped)}" if stopped else "nothing was running")


@cluster_app.command()
def restart(
    process: Annotated[
        str,
        typer.Argument(
            help="The process to restart: connect, master or worker-N (as `status` names "
            "them). Example: connect"
        ),
    ],
    project_dir: ProjectDir = Path("."),
    directory: Directory = None,
    debug: Debug = False,
) -> None:
    """Stop one process of the local cluster (with what it left running, e.g. the Connect
    server's foreachBatch Python workers) and start it again the same way, on the same address.

    Example: python -m runner_devtools.cluster restart connect
    """
    from runner.cli.progress import console

    with reported_errors(debug):
        console.print(_cluster(project_dir, directory).restart(process), highlight=False)


def kafka_connector() -> list[str]:
    """Maven coordinates of Spark's Kafka connector for the installed pyspark."""
    from runner.spark.session.jars import pyspark_version
    from runner.spark.sources.kafka import connector_coordinates

    return connector_coordinates(pyspark_version())


@cluster_app.command()
def status(
    project_dir: ProjectDir = Path("."), directory: Directory = None, debug: Debug = False
) -> None:
    """Each process of the local cluster: running or stopped, PID, address, log. Exit code 1
    when one is stopped.

    Example: python -m runner_devtools.cluster status
    """
    from runner.cli.progress import console

    with reported_errors(debug):
        cluster = _cluster(project_dir, directory)
        lines = cluster.status()
        for line in lines or [f"no cluster in {cluster.directory}"]:
            console.print(line, highlight=False)
        if not lines or None in cluster.pids().values():
            raise typer.Exit(1)


if __name__ == "__main__":
    cluster_app()
