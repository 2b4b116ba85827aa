"""A Spark standalone cluster and a Spark Connect server on this machine, from nothing but the
installed pyspark (its ``bin/spark-class`` and ``bin/spark-submit``) and the Delta jars the
set-up already resolved. Everything binds to 127.0.0.1.

One directory (``target/cluster`` by default) holds all of it::

    cluster.json         the addresses (master spark://127.0.0.1:P, connect sc://127.0.0.1:Q)
                         and how each process was started, so ``restart`` starts it the same
    master.pid / .log    the standalone master
    worker-N.pid / .log  its workers (each starts executors as separate JVMs)
    connect.pid / .log   the Spark Connect server (Delta extension, Delta jars), an application
                         of the standalone master: its executors run on the workers
    work/                the workers' scratch space (executor logs)

``python -m runner_devtools.cluster start|stop|restart|status`` drives it. Importing this module
does not import pyspark.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from runner.processes import (
    ProcessStartError,
    accepts_connections,
    free_port,
    kill_group,
    launch,
    log_tail,
    read_pid,
    recorded_pid,
    terminate,
    with_extra_jvm_options,
)
from runner.spark.session.local_server import connect_server_command, spark_env, spark_home

Role = Literal["master", "worker", "connect"]
STOP_TIMEOUT_SECONDS = 20.0
WORKER_READY = "Successfully registered with master"
# Daemons on a shared small machine: small heaps.
DAEMON_MEMORY = "512m"
# The Connect server's share of the cluster: one executor of one core, so a `runner` driving
# the same cluster (master: spark://...) still gets cores (an application takes them all
# by default, and the Connect server's application never ends).
CONNECT_EXECUTOR = {
    "spark.cores.max": "1",
    "spark.executor.cores": "1",
    "spark.executor.memory": "512m",
}


# The product's error for a process that does not start (runner/processes.py), by this name here.
ClusterError = ProcessStartError


@dataclass
class LocalCluster:
    """The cluster living in ``directory``; its addresses are read back from cluster.json."""

    directory: Path
    addresses: dict[str, str] = field(default_factory=dict)
    # how the processes were started (worker cores and memory, the Connect server's master
    # and extra jars): what ``restart`` starts them with again
    settings: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.directory = self.directory.resolve()
        if self.state_file.exists():
            state = json.loads(self.state_file.read_text())
            self.settings = state.pop("settings", {})
            self.addresses = state

    @property
    def state_file(self) -> Path:
        return self.directory / "cluster.json"

    @property
    def master_url(self) -> str | None:
        return self.addresses.get("master")

    @property
    def connect_url(self) -> str | None:
        return self.addresses.get("connect")

    # -- start ---------------------------------------------------------------------------

    def start(
        self,
        workers: int = 1,
        worker_cores: int = 2,
        worker_memory: str = "2g",
        master_port: int = 0,
        connect: bool = True,
        connect_port: int = 0,
        connect_jars: tuple[str, ...] = (),
        connect_conf: dict[str, str] | None = None,
    ) -> None:
        """Start a master and ``workers`` workers, then (``connect``) a Connect server running
        on that master. Port 0: a free one. ``connect_jars``: Maven coordinates the Connect
        server loads beyond Delta's (Spark's Kafka connector, S3A). ``connect_conf``: Spark
        settings of the server beyond the runner's (``spark.hadoop.fs.s3a.*``: a client
        cannot give them to the server's Hadoop). Anything already running here is an
        error."""
        running = [name for name, pid in self.pids().items() if pid is not None]
        if running:
            raise ClusterError(
                f"a cluster already runs in {self.directory} ({', '.join(running)})",
                hint="`python -m runner_devtools.cluster status` shows it; "
                "`python -m runner_devtools.cluster stop` stops it",
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        self.addresses = {}
        self.settings = {"worker_cores": worker_cores, "worker_memory": worker_memory}
        try:
            self.start_master(master_port)
            for number in range(1, workers + 1):
                self.start_worker(f"worker-{number}")
            if connect:
                self.start_connect(
                    connect_port, connect_jars=connect_jars, connect_conf=connect_conf
                )
        except BaseException:
            self.stop()
            raise
        self._save()

    def start_master(self, port: int = 0) -> str:
        """Start the standalone master on ``port`` (0: a free one)."""
        port = port or free_port()
        self._launch(
            "master",
            "master",
            [
                str(spark_home() / "bin" / "spark-class"),
                "org.apache.spark.deploy.master.Master",
                "--host", "127.0.0.1", "--port", str(port), "--webui-port", "0",
            ],
            ready=lambda: accepts_connections(port),
            port=port,
        )  # fmt: skip
        self.addresses["master"] = f"spark://127.0.0.1:{port}"
        self._save()
        return self.addresses["master"]

    def start_worker(self, name: str) -> None:
        """Start worker ``name`` (worker-N) on the master, with the cores and memory of
        ``start``."""
        master = self.master_url
        if master is None:
            raise ClusterError(f"cannot start {name}: no master in {self.directory}")
        self._launch(
            name,
            "worker",
            [
                str(spark_home() / "bin" / "spark-class"),
                "org.apache.spark.deploy.worker.Worker",
                "--host", "127.0.0.1", "--webui-port", "0",
                "--cores", str(self.settings.get("worker_cores", 2)),
                "--memory", str(self.settings.get("worker_memory", "2g")),
                "--work-dir", str(self.directory / "work"),
                master,
            ],
            ready=partial(self._logged, name, WORKER_READY, self._log_size(name)),
        )  # fmt: skip

    def start_connect(
        self,
        port: int = 0,
        master: str | None = None,
        connect_jars: tuple[str, ...] = (),
        connect_conf: dict[str, str] | None = None,
    ) -> str:
        """Start the Spark Connect server on ``port`` (0: a free one), as an application of
        ``master``: the standalone master when there is one, else ``local[2]``, with the
        extra settings ``connect_conf`` (``start``)."""
        from runner.spark.session.builder import DEFAULT_CONF
        from runner.spark.session.jars import delta_coordinates, resolve_jars

        port = port or free_port()
        master = master or self.master_url or "local[2]"
        jars = ",".join(str(p) for p in resolve_jars(delta_coordinates() + list(connect_jars)))
        conf = {
            key: DEFAULT_CONF[key]
            for key in (
                "spark.sql.extensions",
                "spark.sql.catalog.spark_catalog",
                "spark.ui.enabled",
                "spark.sql.session.timeZone",
                "spark.sql.streaming.stopTimeout",
                "spark.databricks.delta.snapshotPartitions",
                "spark.hadoop.fs.AbstractFileSystem.file.impl",
                "spark.driver.extraJavaOptions",
            )
        }
        conf["spark.driver.extraJavaOptions"] = with_extra_jvm_options(
            conf["spark.driver.extraJavaOptions"]
        )
        conf["spark.driver.memory"] = "1g"
        conf["spark.jars"] = jars
        conf["spark.sql.shuffle.partitions"] = "4"
        if master.startswith("spark://"):
            conf |= CONNECT_EXECUTOR
            conf["spark.executor.extraJavaOptions"] = with_extra_jvm_options("")
        conf |= connect_conf or {}
        command = connect_server_command(master, port, conf, self.directory / "connect.properties")
        self._launch(
            "connect", "connect", command, ready=lambda: accepts_connections(port), port=port
        )
        self.addresses["connect"] = f"sc://127.0.0.1:{port}"
        self.settings["connect_master"] = master
        self.settings["connect_jars"] = list(connect_jars)
        self.settings["connect_conf"] = dict(connect_conf or {})
        self._save()
        return self.addresses["connect"]

    def restart(self, name: str) -> str:
        """Stop process ``name`` (master, worker-N or connect) with what it left running, and
        start it again the same way, on the same address. Returns what it did, in a line."""
        known = self.names()
        if name not in known:
            raise ClusterError(
                f"no process named {name!r} in {self.directory}",
                hint=f"the processes here: {', '.join(known) or '(none)'}",
            )
        stopped = self.stop(only=name)
        if name == "master":
            assert self.master_url is not None
            self.start_master(_port_of(self.master_url))
        elif name == "connect":
            assert self.connect_url is not None
            self.start_connect(
                _port_of(self.connect_url),
                self.settings.get("connect_master"),
                tuple(self.settings.get("connect_jars", ())),
                self.settings.get("connect_conf"),
            )
        else:
            self.start_worker(name)
        pid = read_pid(self.pid_file(name))
        was = f"stopped {stopped[0]}, " if stopped else ""
        address = self.addresses.get(name, "")
        return f"{name}: {was}started pid {pid} {address}".rstrip()

    def _launch(
        self,
        name: str,
        role: Role,
        command: list[str],
        ready: Callable[[], bool],
        port: int | None = None,
    ) -> None:
        """Start ``command`` and wait until ``ready()`` (``runner.processes.launch``)."""
        env = {**spark_env(self.directory), "SPARK_DAEMON_MEMORY": DAEMON_MEMORY}
        launch(
            command,
            what=f"Spark {role}",
            log=self.log_file(name),
            pid_file=self.pid_file(name),
            env=env,
            ready=ready,
            port=port,
            tied=bool(os.environ.get("RUNNER_CLUSTER_TIED")),
        )

    def _save(self) -> None:
        state = {**self.addresses, "settings": self.settings}
        # owner-only: the Connect server's settings may hold a store's credentials
        self.state_file.touch(mode=0o600)
        self.state_file.chmod(0o600)
        self.state_file.write_text(json.dumps(state, indent=2) + "\n")

    # -- stop, status ------------------------------------------------------------------------

    def names(self) -> list[str]:
        """Process names with a PID file, in start order: master, workers, connect."""
        found = (
            sorted(p.stem for p in self.directory.glob("*.pid")) if self.directory.exists() else []
        )
        order = {"master": 0, "connect": 2}
        return sorted(found, key=lambda n: (order.get(n, 1), n))

    def pids(self) -> dict[str, int | None]:
        """Each process's PID, or None when its PID file names a process that is gone."""
        result: dict[str, int | None] = {}
        for name in self.names():
            result[name] = read_pid(self.pid_file(name))
        return result

    def stop(self, only: str | None = None) -> list[str]:
        """Stop every process (or just ``only``), newest first, SIGTERM then SIGKILL, and what
        each left in its process group: a Connect server killed from outside leaves its
        foreachBatch Python workers running, orphaned. Returns what it stopped, e.g.
        ['connect (pid 123)', ...]."""
        stopped = []
        for name, pid in reversed(list(self.pids().items())):
            if only is not None and name != only:
                continue
            if pid is not None:
                terminate(pid, STOP_TIMEOUT_SECONDS)
                stopped.append(f"{name} (pid {pid})")
            else:
                gone = recorded_pid(self.pid_file(name))
                if gone is not None:  # the leader died; its group may live on
                    kill_group(gone)
            self.pid_file(name).unlink(missing_ok=True)
        if only is None:
            self.state_file.unlink(missing_ok=True)
            self.addresses = {}
        return stopped

    def status(self) -> list[str]:
        """One line per process: name, running or stopped, pid, address (and for the Connect
        server, the master its application runs on)."""
        lines = []
        for name, pid in self.pids().items():
            address = ""
            if name in ("master", "connect"):
                address = f" {self.addresses.get(name, '')}"
            if name == "connect" and self.settings.get("connect_master"):
                address += f" on {self.settings['connect_master']}"
            state = f"running, pid {pid}" if pid is not None else "stopped"
            lines.append(f"{name:<9} {state}{address} (log: {self.log_file(name)})")
        return lines

    # -- files -------------------------------------------------------------------------------

    def pid_file(self, name: str) -> Path:
        return self.directory / f"{name}.pid"

    def log_file(self, name: str) -> Path:
        return self.directory / f"{name}.log"

    def _logged(self, name: str, text: str, after: int = 0) -> bool:
        """``text`` is in ``name``'s log after its first ``after`` characters (a restarted
        process appends to the log of the one before)."""
        return text in self._log_text(name)[after:]

    def _log_size(self, name: str) -> int:
        return len(self._log_text(name))

    def _log_text(self, name: str) -> str:
        path = self.log_file(name)
        return path.read_text(errors="replace") if path.exists() else ""

    def log_tail(self, name: str, lines: int = 15) -> str:
        return log_tail(self.log_file(name), lines)


def _port_of(url: str) -> int:
    """The port of ``spark://H:P`` or ``sc://H:P``."""
    return int(url.rsplit(":", 1)[1])
