"""The project's local Spark Connect server (`runner server start|stop|status`), and whether a
command on a ``local[...]`` target uses it instead of starting a JVM of its own.

A JVM start costs 20-40 s on two cores; a Connect client answers in seconds. The server runs
the target's master (``local[*]``) with everything an in-process session of that target has:
Delta's jars, extension and catalog, the runner's defaults, project.yml's ``spark_conf`` and
the target's warehouse. Checkpoint and table paths are absolute and chosen by the client, so a
command through the server reads and writes the same tables and checkpoints as in-process.

``target/server`` in the project (git-ignored with ``target/``) holds::

    server.json    address, PID, the target it serves and a digest of its settings
    spark.conf     its Spark settings (owner-only: env_var() values are in it)
    connect.pid    the server's PID (a JVM, in a session of its own)
    connect.log    its log

A command uses the server only when it is up (PID alive, port answering) and serves this
target with the same settings; otherwise it says why in one line and starts Spark in its own
process. ``--no-server`` or ``RUNNER_NO_SERVER=1`` forces the in-process JVM.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from runner.errors import ConfigError
from runner.processes import (
    ProcessStartError,
    accepts_connections,
    free_port,
    launch,
    read_pid,
    terminate,
    with_extra_jvm_options,
)
from runner.specs.target import TargetSpec

SERVER_DIR = Path("target") / "server"
NO_SERVER_ENV = "RUNNER_NO_SERVER"
CONNECT_SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
STOP_TIMEOUT_SECONDS = 20.0
# Settings a Connect client sets on its own session; the server was given all the others.
SESSION_SETTINGS = ("spark.sql.shuffle.partitions", "spark.sql.session.timeZone")


def spark_home() -> Path:
    """The installed pyspark package: it is a complete Spark distribution (bin/, jars/)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise ProcessStartError("pyspark is not installed", hint="run the README's set-up command")
    return Path(spec.origin).parent


def connect_server_command(
    master: str, port: int, conf: dict[str, str], properties: Path
) -> list[str]:
    """``spark-submit`` of a Spark Connect server on 127.0.0.1:``port`` with ``conf``, written
    to the file ``properties`` (readable by its owner only) rather than onto the command line,
    where every user of the machine could read the values of env_var() settings."""
    conf = {
        **conf,
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        # How long a Python worker's socket waits for the server's reply once connected (its
        # auth and reads). Not the 10 s a new foreachBatch worker has to connect back in (fixed
        # in PythonWorkerFactory.createSimpleWorker): spark_home_linked() shortens that start.
        "spark.python.authenticate.socketTimeout": "180s",
    }
    properties.touch(mode=0o600)
    properties.chmod(0o600)
    properties.write_text("".join(f"{key}={_escaped(value)}\n" for key, value in conf.items()))
    return [
        str(spark_home() / "bin" / "spark-submit"),
        "--class", CONNECT_SERVER_CLASS, "--master", master, "--name", "runner-connect",
        "--properties-file", str(properties),
    ]  # fmt: skip


def _escaped(value: str) -> str:
    """A value as a Java properties file reads it back."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


# What a Spark process needs of its home; not python/ (see spark_home_linked).
SPARK_HOME_PARTS = ("bin", "jars", "sbin")


def spark_home_linked(directory: Path) -> Path:
    """``directory``/spark-home: links to the installed pyspark's bin/, jars/ and sbin/, without
    its python/lib. Spark puts $SPARK_HOME/python/lib/pyspark.zip first on the PYTHONPATH of
    every Python worker it starts (PythonUtils.sparkPythonPath); pyspark imported from a zip is
    compiled again at each start, with no cached bytecode: a foreachBatch worker connected back
    in 24 s against 6.5 s from the installed package at load 29 on 2 cores (3.7 s against 1.2 s
    at load 3; bench/python_worker_start_bench.py), and Spark gives it 10 s.
    Without the zip, the workers import this interpreter's pyspark (the same version)."""
    home = directory.resolve() / "spark-home"
    home.mkdir(parents=True, exist_ok=True)
    for part in SPARK_HOME_PARTS:
        link, installed = home / part, spark_home() / part
        if link.is_symlink() and link.readlink() == installed:
            continue
        link.unlink(missing_ok=True)
        link.symlink_to(installed, target_is_directory=True)
    return home


def spark_env(log_dir: Path) -> dict[str, str]:
    """The environment of a Spark process the runner starts: this pyspark (linked in
    ``log_dir``: spark_home_linked), loopback only, its Python workers on this interpreter (so
    they import this runner and this pyspark)."""
    return {
        **os.environ,
        "SPARK_HOME": str(spark_home_linked(log_dir)),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_DAEMON_JAVA_OPTS": with_extra_jvm_options(
            os.environ.get("SPARK_DAEMON_JAVA_OPTS", "")
        ),
        "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
        "SPARK_LOG_DIR": str(log_dir),
    }


@dataclass(frozen=True)
class ServerState:
    """What server.json records about the running server."""

    address: str  # sc://127.0.0.1:PORT
    pid: int
    target: str
    warehouse: str
    checkpoints: str
    settings: str  # digest of the target's Spark settings: changed settings, stale server
    jars: list[str]  # Maven coordinates beyond Delta (Spark's Kafka connector)
    started_at: str

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])


def settings_digest(target: TargetSpec) -> str:
    """A digest of the target's spark_conf (values from env_var() included: hashed, never
    written out), its master and its storage."""
    text = json.dumps(
        [target.master, str(target.warehouse), sorted(target.revealed_conf().items())]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def check_serves(target: TargetSpec) -> None:
    """The local server runs a ``local[...]`` target's Spark; other targets have their own."""
    if target.kind != "local":
        raise ConfigError(
            f"target '{target.name}' runs on {target.shown}: the local server is for targets "
            "with master local[...]",
            hint="choose a local target with --target (its commands then use the server)",
        )


class LocalServer:
    """The local server of the project in ``root``."""

    def __init__(self, root: Path) -> None:
        self.directory = root.resolve() / SERVER_DIR

    @property
    def state_file(self) -> Path:
        return self.directory / "server.json"

    @property
    def pid_file(self) -> Path:
        return self.directory / "connect.pid"

    @property
    def log_file(self) -> Path:
        return self.directory / "connect.log"

    def state(self) -> ServerState | None:
        """The recorded state, or None when no server was started (or it was stopped)."""
        try:
            return ServerState(**json.loads(self.state_file.read_text()))
        except (FileNotFoundError, ValueError, TypeError):
            return None

    def running_pid(self) -> int | None:
        return read_pid(self.pid_file)

    def start(
        self, target: TargetSpec, conf: dict[str, str], jars: list[str], port: int = 0
    ) -> ServerState:
        """Start the server for ``target`` with ``conf`` (every Spark setting of an in-process
        session of it: ``session_conf``) and wait until it answers. Returns its state."""
        check_serves(target)
        pid = self.running_pid()
        if pid is not None:
            state = self.state()
            raise ProcessStartError(
                f"the local server already runs (pid {pid}"
                + (f", {state.address}, target {state.target})" if state else ")"),
                hint="`runner server stop` stops it; `runner server status` shows it",
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        port = port or free_port()
        pid = launch(
            connect_server_command(target.master, port, conf, self.directory / "spark.conf"),
            what="local Spark Connect server",
            log=self.log_file,
            pid_file=self.pid_file,
            env=spark_env(self.directory),
            ready=lambda: accepts_connections(port),
            port=port,
        )
        state = ServerState(
            address=f"sc://127.0.0.1:{port}",
            pid=pid,
            target=target.name,
            warehouse=str(target.warehouse),
            checkpoints=str(target.checkpoint_root),
            settings=settings_digest(target),
            jars=jars,
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        self.state_file.write_text(json.dumps(dataclasses.asdict(state), indent=2) + "\n")
        return state

    def stop(self) -> int | None:
        """Stop the server (SIGTERM, then SIGKILL after 20 s) and forget it. Returns the PID
        it stopped, None when none ran."""
        pid = self.running_pid()
        if pid is not None:
            terminate(pid, STOP_TIMEOUT_SECONDS)
        self.pid_file.unlink(missing_ok=True)
        self.state_file.unlink(missing_ok=True)
        return pid

    def status(self) -> tuple[bool, str]:
        """(up, one line): running with its PID, address and target, or why not."""
        state, pid = self.state(), self.running_pid()
        if state is None:
            return False, f"no local server for this project ({self.directory} is empty)"
        if pid is None:
            return (
                False,
                f"the local server (pid {state.pid}) is not running (log: {self.log_file})",
            )
        answering = "" if accepts_connections(state.port) else " (its port does not answer yet)"
        return answering == "", (
            f"running, pid {pid}, {state.address}, target {state.target} "
            f"(warehouse {state.warehouse}), started {state.started_at}{answering} "
            f"(log: {self.log_file})"
        )


@dataclass(frozen=True)
class ServerChoice:
    """The Connect target to run through (None: in this process) and the line that says so."""

    target: TargetSpec | None
    note: str | None


IN_PROCESS = ServerChoice(None, None)


def server_choice(
    target: TargetSpec,
    root: Path,
    jars: list[str],
    *,
    no_server: bool = False,
    unsupported: str | None = None,
) -> ServerChoice:
    """Whether a command on ``target`` (of the project in ``root``, needing the Maven
    coordinates ``jars`` beyond Delta) runs through the project's local server. Pure apart
    from reading server.json, one PID check and one TCP connection.

    ``unsupported``: why this command cannot run over Spark Connect, said when a server is up."""
    if target.kind != "local" or no_server or os.environ.get(NO_SERVER_ENV, "") not in ("", "0"):
        return IN_PROCESS
    server = LocalServer(root)
    state = server.state()
    if state is None:
        return IN_PROCESS
    if server.running_pid() is None:
        return _in_process(
            f"the local server (pid {state.pid}) has stopped; `runner server start` starts it again"
        )
    if not accepts_connections(state.port):
        return _in_process(f"the local server (pid {state.pid}) does not answer on {state.address}")
    if unsupported is not None:
        return _in_process(unsupported)
    if state.target != target.name:
        return _in_process(
            f"the local server serves target '{state.target}', this command runs on '{target.name}'"
        )
    if state.settings != settings_digest(target):
        return _in_process(
            f"target '{target.name}' has changed (master, warehouse or spark_conf) since the "
            "local server started; `runner server stop` then `runner server start` restarts it"
        )
    missing = sorted(set(jars) - set(state.jars))
    if missing:
        return _in_process(
            f"the local server lacks the jars {', '.join(missing)} these models need; "
            "`runner server stop` then `runner server start` restarts it with them"
        )
    conf = target.revealed_conf()
    connect = dataclasses.replace(
        target,
        remote=state.address,
        spark_conf={k: conf[k] for k in SESSION_SETTINGS if k in conf},
    )
    return ServerChoice(
        connect, f"using the local server {state.address} (runner server stop to stop it)"
    )


def _in_process(reason: str) -> ServerChoice:
    return ServerChoice(None, f"not using the local server: {reason}; Spark starts in this process")
