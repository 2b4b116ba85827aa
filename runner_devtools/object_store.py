"""A local S3-compatible server on loopback, for trying and testing targets on ``s3a://``.

The server is moto's standalone server (``moto[server]``, the ``s3`` extra): a separate process
speaking the S3 HTTP API, started from this project's virtualenv with no download beyond PyPI.
It emulates S3 in memory: buckets and objects last as long as the process (a restart starts
empty). Why this one and not a storage system: docs/deploy.md ("The local object store").

One directory (``target/object-store`` by default) holds it::

    object-store.json   the endpoint, credentials and region clients use
    object-store.pid    the server's process id, for ``stop`` and ``status``
    object-store.log    what the server printed

Command line::

    python -m runner_devtools.object_store start --bucket lake
    python -m runner_devtools.object_store status
    python -m runner_devtools.object_store stop

In Python (tests): ``with local_object_store("lake") as bucket: ...`` starts a server on a free
port in a temporary directory with that bucket, and stops and removes both afterwards. With
``outages=True`` clients reach it through an ``OutageForwarder`` on a port of its own, and
``bucket.outage(10)`` makes the store unreachable for 10 s (connections refused, open ones
reset) while moto keeps its objects in memory: stopping moto's process would lose the bucket.

A development tool, not a `runner` command: the product only connects to an object store.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer

from runner.cli.errors import reported_errors
from runner.cli.options import Debug, ProjectDir
from runner.errors import RunnerError
from runner.object_paths import (
    ACCESS_KEY_KEY,
    ENDPOINT_KEY,
    PATH_STYLE_KEY,
    REGION_KEY,
    SECRET_KEY_KEY,
    S3Settings,
)
from runner.processes import free_port, launch, log_tail, read_pid, terminate

# moto accepts any credentials; these make the settings complete, as a real store needs them.
ACCESS_KEY = "runner-local"
SECRET_KEY = "runner-local-secret"
REGION = "us-east-1"
STOP_TIMEOUT_SECONDS = 10.0
START_TIMEOUT_SECONDS = 60.0
INSTALL_HINT = "install the s3 extra: bash scripts/bootstrap.sh s3 (or pip install -e '.[s3]')"


class ObjectStoreError(RunnerError):
    """The local object store could not be started, reached or stopped."""


@dataclass
class LocalObjectStore:
    """The server living in ``directory``; its endpoint is read back from object-store.json."""

    directory: Path
    endpoint: str | None = field(default=None)

    def __post_init__(self) -> None:
        self.directory = Path(self.directory).resolve()
        if self.state_file.exists():
            self.endpoint = json.loads(self.state_file.read_text()).get("endpoint")

    @property
    def state_file(self) -> Path:
        return self.directory / "object-store.json"

    @property
    def pid_file(self) -> Path:
        return self.directory / "object-store.pid"

    @property
    def log_file(self) -> Path:
        return self.directory / "object-store.log"

    @property
    def settings(self) -> S3Settings:
        """What a client needs to reach this server (boto3, the checkpoint lock)."""
        return S3Settings(
            endpoint=self.endpoint,
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            region=REGION,
            path_style=True,
        )

    def spark_conf(self) -> dict[str, str]:
        """A target's ``spark_conf`` entries that point S3A (and the runner) at this server."""
        if self.endpoint is None:
            raise ObjectStoreError(f"no object store runs in {self.directory}")
        return {
            ENDPOINT_KEY: self.endpoint,
            ACCESS_KEY_KEY: ACCESS_KEY,
            SECRET_KEY_KEY: SECRET_KEY,
            REGION_KEY: REGION,
            PATH_STYLE_KEY: "true",
            "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        }

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, port: int = 0, *, tied: bool = False) -> str:
        """Start the server on 127.0.0.1 (port 0: a free one) and wait until it answers S3
        requests. Returns the endpoint. ``tied``: it dies with this process (tests)."""
        if importlib.util.find_spec("moto") is None:
            raise ObjectStoreError("moto is not installed in this environment", hint=INSTALL_HINT)
        pid = self.pid()
        if pid is not None:
            raise ObjectStoreError(
                f"an object store already runs from {self.directory} (pid {pid}, {self.endpoint})",
                hint="python -m runner_devtools.object_store stop",
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        port = port or free_port()
        endpoint = f"http://127.0.0.1:{port}"
        launch(
            [sys.executable, "-m", "moto.server", "--host", "127.0.0.1", "--port", str(port)],
            what="object store (moto server)",
            log=self.log_file,
            pid_file=self.pid_file,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            ready=lambda: _answers(endpoint),
            port=port,
            timeout=START_TIMEOUT_SECONDS,
            tied=tied,
        )
        self.endpoint = endpoint
        self.state_file.write_text(
            json.dumps({"endpoint": endpoint, "access_key": ACCESS_KEY, "region": REGION}) + "\n"
        )
        return endpoint

    def stop(self) -> bool:
        """Stop the server by its PID (SIGTERM, then SIGKILL). False if none ran."""
        pid = self.pid()
        if pid is not None:
            terminate(pid, STOP_TIMEOUT_SECONDS)
        self.pid_file.unlink(missing_ok=True)
        self.state_file.unlink(missing_ok=True)
        self.endpoint = None
        return pid is not None

    def pid(self) -> int | None:
        return read_pid(self.pid_file)

    def status(self) -> str:
        pid = self.pid()
        if pid is None:
            return f"stopped ({self.directory})"
        serving = "answering" if self.endpoint and _answers(self.endpoint) else "not answering"
        return f"running: pid {pid}, {self.endpoint}, {serving} (log: {self.log_file})"

    def create_bucket(self, bucket: str) -> None:
        """Create ``bucket`` (an existing one is kept)."""
        from runner.s3_client import s3_client

        client = s3_client(self.settings)
        with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
            client.create_bucket(Bucket=bucket)

    def log_tail(self) -> str:
        return log_tail(self.log_file)


class OutageForwarder:
    """A TCP forwarder on 127.0.0.1 in front of the store, for tests of a storage outage.

    moto keeps buckets in memory, so stopping its process loses them; SIGSTOP of the process
    would make requests hang until the clients' timeouts, which is a slow store, not a gone
    one. ``outage(seconds)`` is what clients see when a store goes down: the forwarder stops
    listening (new connections are refused), resets every open connection, and listens again
    on the same port after ``seconds``. Each connection is two threads copying bytes."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = free_port()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self._closed = False
        self._listen()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _listen(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # the listener was closed: an outage, or the end
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
            except OSError:
                _reset(client)
                continue
            upstream.settimeout(None)
            with self._lock:
                self._open.update((client, upstream))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # reset by an outage or by the other side: the connection is over
        finally:
            with self._lock:
                self._open.discard(source)
            source.close()

    def outage(self, seconds: float) -> None:
        """Refuse and reset every connection for ``seconds``, then forward again."""
        self._stop_listening()
        with self._lock:
            for connection in list(self._open):
                _reset(connection)
            self._open.clear()
        time.sleep(seconds)
        if not self._closed:
            self._listen()

    def _stop_listening(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    def close(self) -> None:
        self._closed = True
        self._stop_listening()
        with self._lock:
            for connection in list(self._open):
                _reset(connection)
            self._open.clear()


def _reset(connection: socket.socket) -> None:
    """Close with an RST, as a crashed server's kernel answers, not an orderly FIN."""
    with contextlib.suppress(OSError):
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()


@dataclass(frozen=True)
class LocalBucket:
    """A bucket on a running local store: its URIs and the settings that reach it."""

    store: LocalObjectStore
    name: str
    forwarder: OutageForwarder | None = None

    def outage(self, seconds: float) -> None:
        """The store unreachable for ``seconds`` (``local_object_store(..., outages=True)``)."""
        if self.forwarder is None:
            raise ObjectStoreError("this bucket's store was started without outages=True")
        self.forwarder.outage(seconds)

    @property
    def settings(self) -> S3Settings:
        return self.store.settings

    def uri(self, *parts: str, scheme: str = "s3a") -> str:
        """``s3a://BUCKET/part/...``"""
        return "/".join([f"{scheme}://{self.name}", *(p.strip("/") for p in parts)])

    def spark_conf(self) -> dict[str, str]:
        return self.store.spark_conf()

    def env(self) -> dict[str, str]:
        """The standard AWS variables for this store, for clients that read the environment."""
        assert self.store.endpoint is not None
        return {
            "AWS_ENDPOINT_URL_S3": self.store.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION,
        }


@contextlib.contextmanager
def local_object_store(
    bucket: str, directory: Path | None = None, *, outages: bool = False
) -> Iterator[LocalBucket]:
    """A server on a free port with ``bucket`` for the duration of the block; it dies with this
    process should the block never end. Without ``directory``, a temporary one, removed after.
    ``outages``: clients reach it through an ``OutageForwarder`` (``bucket.outage(seconds)``)."""
    owned = directory is None
    where = Path(tempfile.mkdtemp(prefix="runner-s3-")) if directory is None else directory
    store = LocalObjectStore(where)
    forwarder = None
    try:
        store.start(tied=True)
        store.create_bucket(bucket)
        if outages:
            assert store.endpoint is not None
            forwarder = OutageForwarder(int(store.endpoint.rsplit(":", 1)[1]))
            store.endpoint = forwarder.endpoint  # what settings and spark_conf() give clients
        yield LocalBucket(store, bucket, forwarder)
    finally:
        if forwarder is not None:
            forwarder.close()
        store.stop()
        if owned:
            shutil.rmtree(where, ignore_errors=True)


def _answers(endpoint: str) -> bool:
    """True once the server answers HTTP (any status: an anonymous request may be refused)."""
    try:
        with urllib.request.urlopen(endpoint + "/", timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


# -- command line ----------------------------------------------------------------------------

store_app = typer.Typer(
    help="A local S3-compatible server (moto's, loopback only) for targets on s3a://. "
    "Example: python -m runner_devtools.object_store start --bucket lake",
    no_args_is_help=True,
    add_completion=False,
)

Directory = Annotated[
    Path | None,
    typer.Option(
        "--dir",
        help="Where the PID file, log and object-store.json live (default: target/object-store "
        "in the project). Example: --dir /tmp/my-store",
    ),
]


def _store(project_dir: Path, directory: Path | None) -> LocalObjectStore:
    return LocalObjectStore(directory or project_dir / "target" / "object-store")


@store_app.command()
def start(
    port: Annotated[
        int, typer.Option(help="The port on 127.0.0.1; 0 picks a free one. Example: --port 9000")
    ] = 0,
    bucket: Annotated[
        list[str] | None,
        typer.Option(help="A bucket to create once it runs (repeatable). Example: --bucket lake"),
    ] = None,
    project_dir: ProjectDir = Path("."),
    directory: Directory = None,
    debug: Debug = False,
) -> None:
    """Start the server, create the buckets, then print the spark_conf to put in a target.

    Example: python -m runner_devtools.object_store start --bucket lake
    """
    from runner.cli.progress import console

    with reported_errors(debug):
        store = _store(project_dir, directory)
        store.start(port)
        for name in bucket or []:
            store.create_bucket(name)
        console.print(store.status(), highlight=False)
        if bucket:
            console.print(f"buckets: {', '.join(bucket)}", highlight=False)
        console.print("spark_conf for a target in project.yml:", highlight=False)
        for key, value in store.spark_conf().items():
            console.print(f"  {key}: {value}", highlight=False)


@store_app.command()
def stop(
    project_dir: ProjectDir = Path("."), directory: Directory = None, debug: Debug = False
) -> None:
    """Stop the server by its PID (SIGTERM, then SIGKILL after 10 s); its objects are gone.

    Example: python -m runner_devtools.object_store stop
    """
    from runner.cli.progress import console

    with reported_errors(debug):
        stopped = _store(project_dir, directory).stop()
        console.print("object store stopped" if stopped else "no object store was running")


@store_app.command()
def status(
    project_dir: ProjectDir = Path("."), directory: Directory = None, debug: Debug = False
) -> None:
    """Running or stopped, PID, endpoint, log. Exit code 1 when stopped.

    Example: python -m runner_devtools.object_store status
    """
    from runner.cli.progress import console

    with reported_errors(debug):
        store = _store(project_dir, directory)
        console.print(store.status(), highlight=False)
        if store.pid() is None:
            raise typer.Exit(1)


if __name__ == "__main__":
    store_app()
