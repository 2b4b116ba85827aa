"""A real, single-node Apache Kafka broker for local runs and tests: no Docker, no download
other than Maven Central.

``mvn`` resolves ``org.apache.kafka:kafka_2.13`` and its runtime dependencies into the jar cache
(the same resolver as the Spark jars, unfiltered: the broker is its own JVM). The broker runs in
KRaft combined mode (broker and controller in one process) in a directory of its own::

    <dir>/server.properties   the configuration written by ``start``
    <dir>/log4j2.properties   broker logging, to stdout, which goes to broker.log
    <dir>/data/               the KRaft log directory, formatted once by kafka.tools.StorageTool
    <dir>/broker.log          everything the broker printed; its tail is in every start error
    <dir>/broker.pid          the broker's process id, for ``stop`` and ``status``

Command line::

    python -m runner_devtools.kafka.broker start  --port 9092 --dir target/kafka
    python -m runner_devtools.kafka.broker status --dir target/kafka
    python -m runner_devtools.kafka.broker stop   --dir target/kafka

In Python (tests): ``with local_broker() as bootstrap_servers: ...`` starts a broker on free
ports in a temporary directory and removes both afterwards.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from runner.errors import RunnerError
from runner.processes import accepts_connections, free_port, terminate
from runner.processes import alive as _alive
from runner.processes import die_with_parent as _die_with_parent

KAFKA_VERSION = "4.1.1"
# Kafka logs through slf4j 1.x; the log4j2 binding makes it print (the distribution ships it too).
BROKER_COORDINATES = [
    f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}",
    "org.apache.logging.log4j:log4j-slf4j-impl:2.24.3",
]
# A test broker on a shared 2-core machine: a small heap, the quick JIT tier only.
JVM_OPTIONS = ["-Xmx512m", "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
READY_LINE = "Kafka Server started"
DEFAULT_START_TIMEOUT = 120.0

_LOG4J2 = """\
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.out.ref = out
logger.state.name = state.change.logger
logger.state.level = warn
"""


class BrokerError(RunnerError):
    """The local Kafka broker could not be resolved, formatted, started or stopped."""


def broker_classpath() -> list[Path]:
    """The broker's jars, resolved with mvn into the jar cache on first use."""
    from runner.spark.session.jars import resolve_jars

    return resolve_jars(BROKER_COORDINATES, skip_pyspark_jars=False)


@dataclass
class LocalBroker:
    """One single-node KRaft broker living in ``directory``."""

    directory: Path
    port: int = 9092
    controller_port: int | None = None

    def __post_init__(self) -> None:
        self.directory = Path(self.directory).resolve()

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.directory / "broker.log"

    @property
    def pid_file(self) -> Path:
        return self.directory / "broker.pid"

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    # -- lifecycle ------------------------------------------------------------------------

    def start(
        self, timeout: float = DEFAULT_START_TIMEOUT, *, die_with_parent: bool = False
    ) -> None:
        """Format the log directory if new, start the broker, wait until it serves clients.

        ``die_with_parent`` (Linux) ends the broker when the process that started it dies, so
        a killed test run leaves no broker behind.
        """
        if self.pid() is not None:
            raise BrokerError(
                f"a broker is already running from {self.directory} (pid {self.pid()})",
                hint=f"python -m runner_devtools.kafka.broker stop --dir {self.directory}",
            )
        if accepts_connections(self.port):
            raise BrokerError(
                f"port {self.port} is already in use",
                hint="choose another with --port, or stop what listens there",
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        self.controller_port = self.controller_port or free_port()
        classpath = os.pathsep.join(str(jar) for jar in broker_classpath())
        properties = self._write_config()
        self._format(classpath, properties)
        with self.log_file.open("ab") as log:
            process = subprocess.Popen(
                [
                    _java(),
                    *JVM_OPTIONS,
                    *self._log_options(),
                    "-cp",
                    classpath,
                    "kafka.Kafka",
                    str(properties),
                ],  # fmt: skip
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.directory,
                start_new_session=True,  # Ctrl-C in a terminal does not reach the broker
                preexec_fn=_die_with_parent if die_with_parent else None,
            )
        self.pid_file.write_text(f"{process.pid}\n")
        self._wait_ready(process, timeout)

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the broker (SIGTERM, then SIGKILL after ``timeout``). False if none ran."""
        pid = self.pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        terminate(pid, timeout)
        self.pid_file.unlink(missing_ok=True)
        return True

    def pid(self) -> int | None:
        """The running broker's process id, or None."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        return pid if _alive(pid) else None

    def status(self) -> str:
        pid = self.pid()
        if pid is None:
            return f"stopped ({self.directory})"
        self.port = self._configured_port() or self.port
        serving = "accepting connections" if accepts_connections(self.port) else "not listening"
        return f"running: pid {pid}, {self.bootstrap_servers}, {serving} ({self.directory})"

    def log_tail(self, lines: int = 20) -> str:
        """The broker log's ERROR lines (each with the line after it: the exception) and its
        last ``lines`` lines: a failed start's cause is often above a long config dump."""
        if not self.log_file.exists():
            return "(no broker log)"
        text = self.log_file.read_text(errors="replace").splitlines()
        errors: list[str] = []
        for i, line in enumerate(text):
            if " ERROR " in line or " FATAL " in line:
                errors.append(line)
                if i + 1 < len(text) and not text[i + 1].startswith("["):
                    errors.append("    " + text[i + 1].strip())
        parts = []
        if errors:
            parts += ["errors in the broker log:", *errors[:12]]
        parts += ["last lines of the broker log:", *text[-lines:]]
        return "\n".join(parts)

    # -- steps ----------------------------------------------------------------------------

    def _write_config(self) -> Path:
        properties = self.directory / "server.properties"
        settings = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},"
            f"CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.data_dir),
            "num.partitions": "1",
            "auto.create.topics.enable": "true",
            # One node: every internal topic has a single replica.
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            # Test events carry old timestamps: time-based retention would delete them at once.
            "log.retention.ms": "-1",
            "num.network.threads": "2",
            "num.io.threads": "2",
        }
        properties.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        (self.directory / "log4j2.properties").write_text(_LOG4J2)
        return properties

    def _configured_port(self) -> int | None:
        """The client port the running broker was started with (from its server.properties)."""
        properties = self.directory / "server.properties"
        if not properties.exists():
            return None
        for line in properties.read_text().splitlines():
            if line.startswith("advertised.listeners="):
                return int(line.rsplit(":", 1)[1])
        return None

    def _log_options(self) -> list[str]:
        return [f"-Dlog4j2.configurationFile=file:{self.directory / 'log4j2.properties'}"]

    def _format(self, classpath: str, properties: Path) -> None:
        if (self.data_dir / "meta.properties").exists():
            return  # formatted by an earlier start: keep its topics
        command = [
            _java(), "-Xmx256m", "-XX:TieredStopAtLevel=1", *self._log_options(),
            "-cp", classpath, "kafka.tools.StorageTool",
            "format", "--cluster-id", _cluster_id(), "--config", str(properties),
        ]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        with self.log_file.open("a") as log:
            log.write(result.stdout + result.stderr)
        if result.returncode != 0:
            raise BrokerError(
                f"formatting the KRaft log directory {self.data_dir} failed "
                f"(exit {result.returncode})",
                detail=self.log_tail(),
            )

    def _wait_ready(self, process: subprocess.Popen[bytes], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise BrokerError(
                    f"the Kafka broker exited with code {process.returncode} while starting "
                    f"(log: {self.log_file})",
                    detail=self.log_tail(),
                )
            if accepts_connections(self.port) and READY_LINE in self._log_text():
                return
            time.sleep(0.25)
        self.stop()
        raise BrokerError(
            f"the Kafka broker did not become ready on {self.bootstrap_servers} within "
            f"{timeout:.0f}s (log: {self.log_file})",
            detail=self.log_tail(),
        )

    def _log_text(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""


@contextlib.contextmanager
def local_broker(
    port: int | None = None, directory: Path | None = None, timeout: float = DEFAULT_START_TIMEOUT
) -> Iterator[str]:
    """Start a broker for the duration of the block; yields its bootstrap servers.

    Without ``directory`` the broker lives in a temporary directory that is removed afterwards.
    """
    owned = directory is None
    where = Path(tempfile.mkdtemp(prefix="runner-kafka-")) if directory is None else directory
    broker = LocalBroker(where, port or free_port())
    try:
        broker.start(timeout, die_with_parent=True)
        yield broker.bootstrap_servers
    finally:
        broker.stop()
        if owned:
            shutil.rmtree(where, ignore_errors=True)


def _cluster_id() -> str:
    """A random cluster id as Kafka prints it: 16 bytes, URL-safe base64 without padding."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):  # would read as an option on a command line
            return text


def _java() -> str:
    java = shutil.which("java")
    if java is None:
        raise BrokerError(
            "java is not on PATH; the Kafka broker needs a Java 17+ runtime",
            hint="install one (Debian: apt-get install openjdk-17-jre-headless)",
        )
    return java


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m runner_devtools.kafka.broker",
        description="Start, stop or inspect a local single-node Apache Kafka broker (KRaft).",
    )
    parser.add_argument("command", choices=["start", "stop", "status"])
    parser.add_argument("--port", type=int, default=9092, help="client port (default 9092)")
    parser.add_argument("--dir", type=Path, default=Path("target/kafka"), help="broker directory")
    parser.add_argument("--timeout", type=float, default=DEFAULT_START_TIMEOUT)
    args = parser.parse_args(argv)
    broker = LocalBroker(args.dir, args.port)
    try:
        if args.command == "start":
            broker.start(args.timeout)
            print(f"Kafka {KAFKA_VERSION} broker started: {broker.bootstrap_servers}")
            print(f"  pid {broker.pid()}, log {broker.log_file}")
        elif args.command == "stop":
            print("broker stopped" if broker.stop() else "no broker was running")
        else:
            print(broker.status())
    except RunnerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
