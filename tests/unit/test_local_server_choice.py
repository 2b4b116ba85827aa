"""When a command on a local target goes through the project's local server, and the one line
that says why not otherwise. A real listening socket and a real live PID stand for the server
(the JVM itself is started in tests/kafka/test_kafka_connect.py)."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.spark.session.local_server import (
    IN_PROCESS,
    NO_SERVER_ENV,
    LocalServer,
    ServerState,
    server_choice,
    settings_digest,
    spark_env,
    spark_home,
    spark_home_linked,
)
from runner.specs.target import TargetSpec


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def local_target(root: Path, name: str = "local", partitions: str = "4") -> TargetSpec:
    return TargetSpec(
        name=name,
        master="local[*]",
        warehouse=root / "target" / name / "warehouse",
        checkpoint_root=root / "target" / name / "checkpoints",
        spark_conf={"spark.sql.shuffle.partitions": partitions, "spark.executor.memory": "1g"},
    )


def record(root: Path, target: TargetSpec, port: int, pid: int, jars: list[str]) -> None:
    server = LocalServer(root)
    server.directory.mkdir(parents=True)
    server.pid_file.write_text(f"{pid}\n")
    state = ServerState(
        address=f"sc://127.0.0.1:{port}",
        pid=pid,
        target=target.name,
        warehouse=str(target.warehouse),
        checkpoints=str(target.checkpoint_root),
        settings=settings_digest(target),
        jars=jars,
        started_at="2026-11-25T00:00:00+00:00",
    )
    server.state_file.write_text(json.dumps(dataclasses.asdict(state)))


def test_a_running_server_serves_its_target_with_its_paths(tmp_path: Path, listening: int) -> None:
    target = local_target(tmp_path)
    record(tmp_path, target, listening, os.getpid(), jars=["kafka:1"])
    choice = server_choice(target, tmp_path, ["kafka:1"])
    assert choice.note == (
        f"using the local server sc://127.0.0.1:{listening} (runner server stop to stop it)"
    )
    assert choice.target is not None and choice.target.kind == "connect"
    assert choice.target.remote == f"sc://127.0.0.1:{listening}"
    # same tables and checkpoints; only the settings a Connect client may set stay its own
    assert choice.target.warehouse == target.warehouse
    assert choice.target.checkpoint_root == target.checkpoint_root
    assert choice.target.spark_conf == {"spark.sql.shuffle.partitions": "4"}


def test_no_server_and_the_env_var_keep_spark_in_process(
    tmp_path: Path, listening: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = local_target(tmp_path)
    record(tmp_path, target, listening, os.getpid(), jars=[])
    assert server_choice(target, tmp_path, [], no_server=True) == IN_PROCESS
    monkeypatch.setenv(NO_SERVER_ENV, "1")
    assert server_choice(target, tmp_path, []) == IN_PROCESS


def test_no_server_recorded_means_in_process_without_a_word(tmp_path: Path) -> None:
    assert server_choice(local_target(tmp_path), tmp_path, []) == IN_PROCESS


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("other target", "the local server serves target 'local', this command runs on 'dev'"),
        ("settings", "target 'local' has changed (master, warehouse or spark_conf)"),
        ("jars", "the local server lacks the jars kafka:1 these models need"),
        ("unsupported", "backfill does not run over Spark Connect yet"),
        ("stopped", "the local server (pid 999999999) has stopped"),
    ],
)
def test_a_server_that_cannot_serve_says_why(
    tmp_path: Path, listening: int, change: str, reason: str
) -> None:
    target = local_target(tmp_path)
    pid = 999_999_999 if change == "stopped" else os.getpid()
    record(tmp_path, target, listening, pid, jars=[])
    asked = {
        "other target": local_target(tmp_path, name="dev"),
        "settings": local_target(tmp_path, partitions="8"),
    }.get(change, target)
    choice = server_choice(
        asked,
        tmp_path,
        ["kafka:1"] if change == "jars" else [],
        unsupported=reason if change == "unsupported" else None,
    )
    assert choice.target is None
    assert choice.note is not None and choice.note.startswith(
        f"not using the local server: {reason}"
    )
    assert choice.note.endswith("; Spark starts in this process")


def test_a_cluster_target_never_looks_for_a_server(tmp_path: Path, listening: int) -> None:
    target = local_target(tmp_path)
    record(tmp_path, target, listening, os.getpid(), jars=[])
    cluster = dataclasses.replace(target, master="spark://127.0.0.1:7077")
    assert server_choice(cluster, tmp_path, []) == IN_PROCESS


def test_the_server_commands_without_a_server(example_project: Path) -> None:
    from typer.testing import CliRunner

    from runner.cli.app import app

    cli = CliRunner()
    status = cli.invoke(app, ["server", "status", "-p", str(example_project)])
    assert status.exit_code == 1
    assert "no local server for this project" in status.output
    stop = cli.invoke(app, ["server", "stop", "-p", str(example_project)])
    assert stop.exit_code == 0 and "no local server ran" in stop.output
    # the example's `connect` target has a server of its own: refused before Spark is loaded
    start = cli.invoke(app, ["server", "start", "-p", str(example_project), "-t", "connect"])
    assert start.exit_code == 2
    assert (
        "target 'connect' runs on sc://127.0.0.1:15002: the local server is for targets with "
        in (start.output)
    )


def test_the_spark_home_of_the_servers_has_no_python_zips(tmp_path: Path) -> None:
    """Spark puts $SPARK_HOME/python/lib/pyspark.zip first on its Python workers' path: the
    linked home has no python/, so they import the installed pyspark (with its bytecode)."""
    stale = tmp_path / "spark-home" / "jars"
    stale.parent.mkdir()
    stale.symlink_to(tmp_path / "gone", target_is_directory=True)  # a moved venv's
    home = spark_home_linked(tmp_path)
    assert spark_home_linked(tmp_path) == home  # again: the same links, no error
    assert sorted(p.name for p in home.iterdir()) == ["bin", "jars", "sbin"]
    assert (home / "bin" / "spark-submit").is_file() and any((home / "jars").glob("spark-core_*"))
    assert (home / "jars").readlink() == spark_home() / "jars"
    assert (spark_home() / "python" / "lib" / "pyspark.zip").is_file()  # what it leaves out
    assert spark_env(tmp_path)["SPARK_HOME"] == str(home)
