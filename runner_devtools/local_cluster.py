"""A Spark standalone cluster and a Spark Connect server on this machine, from nothing but the
installed pyspark (its ``bin/spark-class`` and ``bin/spark-submit``) and the Delta jars the
set-up already resolved. Everything binds to 127.0.0.1.

One directory (``target/cluster`` by default) holds all of it::

    cluster.json         the addresses: master spark://127.0.0.1:P, connect sc://127.0.0.1:Q
    master.pid / .log    the standalone master
    worker-N.pid / .log  its workers (each starts executors as separate JVMs)
    connect.pid / .log   the Spark Connect server (Delta extension, Delta jars, local[2])
    work/                the workers' scratch space (executor logs)

``python -m runner_devtools.cluster start|stop|status`` drives it. Importing this module does not
import pyspark.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal

from runner.processes import (
    ProcessStartError,
    accepts_connections,
    free_port,
    launch,
    log_tail,
    read_pid,
    terminate,
    with_extra_jvm_options,
)
from runner.spark.session.local_server import connect_server_command, spark_env, spark_home

Role = Literal["master", "worker", "connect"]
STOP_TIMEOUT_SECONDS = 20.0
WORKER_READY = "Successfully registered with master"
# Daemons on a shared small machine: small heaps.
DAEMON_MEMORY = "512m"


# The product's error for a process that does not start (runner/processes.py), by this name here.
ClusterError = ProcessStartError


@dataclass
class LocalCluster:
    """The cluster living in ``directory``; its addresses are read back from cluster.json."""

    directory: Path
    addresses: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.directory = self.directory.resolve()
        if self.state_file.exists():
            self.addresses = json.loads(self.state_file.read_text())

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
        connect_master: str = "local[2]",
    ) -> None:
        """Start a master and ``workers`` workers, then (``connect``) a Connect server.
        Port 0: a free one. Anything already running here is an error."""
        running = [name for name, pid in self.pids().items() if pid is not None]
        if running:
            raise ClusterError(
                f"a cluster already runs in {self.directory} ({', '.join(running)})",
                hint="`python -m runner_devtools.cluster status` shows it; "
                "`python -m runner_devtools.cluster stop` stops it",
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        port = master_port or free_port()
        master = f"spark://127.0.0.1:{port}"
        self.addresses = {"master": master}
        try:
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
            for number in range(1, workers + 1):
                name = f"worker-{number}"
                self._launch(
                    name,
                    "worker",
                    [
                        str(spark_home() / "bin" / "spark-class"),
                        "org.apache.spark.deploy.worker.Worker",
                        "--host", "127.0.0.1", "--webui-port", "0",
                        "--cores", str(worker_cores), "--memory", worker_memory,
                        "--work-dir", str(self.directory / "work"),
                        master,
                    ],
                    ready=partial(self._logged, name, WORKER_READY),
                )  # fmt: skip
            if connect:
                self.start_connect(connect_port, connect_master)
        except BaseException:
            self.stop()
            raise
        self._save()

    def start_connect(self, port: int = 0, master: str = "local[2]") -> str:
        """Start (or restart, on the same port when given) the Spark Connect server."""
        from runner.spark.session.builder import DEFAULT_CONF
        from runner.spark.session.jars import delta_coordinates, resolve_jars

        port = port or free_port()
        jars = ",".join(str(p) for p in resolve_jars(delta_coordinates()))
        conf = {
            key: DEFAULT_CONF[key]
            for key in (
                "spark.sql.extensions",
                "spark.sql.catalog.spark_catalog",
                "spark.ui.enabled",
                "spark.sql.session.timeZone",
                "spark.sql.streaming.stopTimeout",
                "spark.databricks.delta.snapshotPartitions",
                "spark.driver.extraJavaOptions",
            )
        }
        conf["spark.driver.extraJavaOptions"] = with_extra_jvm_options(
            conf["spark.driver.extraJavaOptions"]
        )
        conf["spark.driver.memory"] = "1g"
        conf["spark.jars"] = jars
        conf["spark.sql.shuffle.partitions"] = "4"
        command = connect_server_command(master, port, conf, self.directory / "connect.properties")
        self._launch(
            "connect", "connect", command, ready=lambda: accepts_connections(port), port=port
        )
        self.addresses["connect"] = f"sc://127.0.0.1:{port}"
        self._save()
        return self.addresses["connect"]

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
        self.state_file.write_text(json.dumps(self.addresses, indent=2) + "\n")

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
        """Stop every process (or just ``only``), newest first, SIGTERM then SIGKILL.
        Returns what it stopped, e.g. ['connect (pid 123)', ...]."""
        stopped = []
        for name, pid in reversed(list(self.pids().items())):
            if only is not None and name != only:
                continue
            if pid is not None:
                terminate(pid, STOP_TIMEOUT_SECONDS)
                stopped.append(f"{name} (pid {pid})")
            self.pid_file(name).unlink(missing_ok=True)
        if only is None:
            self.state_file.unlink(missing_ok=True)
            self.addresses = {}
        return stopped

    def status(self) -> list[str]:
        """One line per process: name, running or stopped, pid, address."""
        lines = []
        for name, pid in self.pids().items():
            address = ""
            if name in ("master", "connect"):
                address = f" {self.addresses.get(name, '')}"
            state = f"running, pid {pid}" if pid is not None else "stopped"
            lines.append(f"{name:<9} {state}{address} (log: {self.log_file(name)})")
        return lines

    # -- files -------------------------------------------------------------------------------

    def pid_file(self, name: str) -> Path:
        return self.directory / f"{name}.pid"

    def log_file(self, name: str) -> Path:
        return self.directory / f"{name}.log"

    def _logged(self, name: str, text: str) -> bool:
        return text in self._log_text(name)

    def _log_text(self, name: str) -> str:
        path = self.log_file(name)
        return path.read_text(errors="replace") if path.exists() else ""

    def log_tail(self, name: str, lines: int = 15) -> str:
        return log_tail(self.log_file(name), lines)
