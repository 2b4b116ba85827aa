"""A private PostgreSQL server on 127.0.0.1 for a shared Hive metastore (a target's ``catalog:``
in project.yml): ``python -m runner_devtools.metastore start|stop|status``.

Debian's ``postgresql`` package provides the binaries; ``start`` installs it with apt-get when
it is missing. The server is the project's own: ``initdb`` into a directory of its own (the
project's git-ignored ``target/metastore`` by default), on a free loopback port, never the
system's cluster. PostgreSQL refuses to run as root, so under root it runs as the ``postgres``
user the Debian package creates, and that user owns the data directory::

    metastore.json   port, database, user and password (owner-only), kept across restarts
    data/            the cluster (initdb), where the catalog lives
    postgres.pid     the server's PID (``postgres`` in the foreground, in a session of its own)
    postgres.log     its log

A restart reuses the data and the port, so every job's ``catalog: url`` stays valid.
Importing this module does not import pyspark.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from runner.cli.errors import reported_errors
from runner.cli.options import Debug, ProjectDir
from runner.errors import RunnerError
from runner.processes import (
    free_port,
    launch,
    read_pid,
    terminate,
    wait_exit,
)

DATABASE = "metastore"
USER = "runner"
SERVICE_USER = "postgres"  # Debian's package creates it; the server runs as it under root
PG_ROOT = Path("/usr/lib/postgresql")
STOP_TIMEOUT_SECONDS = 20.0
PASSWORD_ENV = "RUNNER_METASTORE_PASSWORD"


class MetastoreError(RunnerError):
    """The metastore's PostgreSQL could not be installed, set up, started or stopped."""


@dataclass(frozen=True)
class Settings:
    """What metastore.json records: where the server listens and how to log in."""

    port: int
    database: str = DATABASE
    user: str = USER
    password: str = ""

    @property
    def url(self) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.port}/{self.database}"


def postgres_bin() -> Path:
    """The directory of PostgreSQL's server binaries (the newest Debian version installed),
    installing Debian's ``postgresql`` package first when there is none."""
    found = _installed_bin()
    if found is None:
        install_postgresql()
        found = _installed_bin()
    if found is None:
        raise MetastoreError(
            f"PostgreSQL's initdb is not under {PG_ROOT}/*/bin after installing postgresql",
            hint="install it yourself: apt-get install -y postgresql",
        )
    return found


def _installed_bin() -> Path | None:
    found = sorted(PG_ROOT.glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    return found[-1].parent if found else None


def install_postgresql() -> None:
    """``apt-get install postgresql`` (through sudo when not root); said on stderr first."""
    apt = shutil.which("apt-get")
    if apt is None:
        raise MetastoreError(
            "PostgreSQL is not installed and this machine has no apt-get",
            hint="install PostgreSQL 13 or later so that /usr/lib/postgresql/N/bin/initdb exists",
        )
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    print("==> installing postgresql (apt-get) for the shared catalog", file=sys.stderr)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in ([apt, "update", "-qq"], [apt, "install", "-y", "-qq", "postgresql"]):
        result = subprocess.run(
            [*sudo, *command], capture_output=True, text=True, env=env, check=False
        )
        if result.returncode != 0:
            raise MetastoreError(
                f"{' '.join(command)} failed (exit {result.returncode})",
                detail=(result.stdout + result.stderr)[-2000:],
                hint="install it yourself: apt-get install -y postgresql",
            )


def service_user() -> pwd.struct_passwd | None:
    """The user the server runs as: ``postgres`` under root (PostgreSQL refuses root), else
    None (the current user)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SERVICE_USER)
    except KeyError:
        raise MetastoreError(
            f"running as root, and there is no '{SERVICE_USER}' user to run PostgreSQL as",
            hint="apt-get install -y postgresql creates it",
        ) from None


class LocalMetastore:
    """The metastore database server living in ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()

    @property
    def state_file(self) -> Path:
        return self.directory / "metastore.json"

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def pid_file(self) -> Path:
        return self.directory / "postgres.pid"

    @property
    def log_file(self) -> Path:
        return self.directory / "postgres.log"

    def settings(self) -> Settings | None:
        try:
            return Settings(**json.loads(self.state_file.read_text()))
        except (FileNotFoundError, ValueError, TypeError):
            return None

    def pid(self) -> int | None:
        return read_pid(self.pid_file)

    # -- start -------------------------------------------------------------------------------

    def start(self, port: int = 0, *, tied: bool = False) -> Settings:
        """Create the cluster and its database on first use, then start the server on its
        recorded port (``port`` on first use; 0 picks a free one). ``tied``: it stops when this
        process dies (tests)."""
        if self.pid() is not None:
            raise MetastoreError(
                f"the metastore already runs from {self.directory} (pid {self.pid()})",
                hint="`python -m runner_devtools.metastore stop` stops it",
            )
        bin_dir = postgres_bin()
        user = service_user()
        settings = self.settings() or Settings(port=port or free_port())
        if not (self.data_dir / "PG_VERSION").exists():
            settings = Settings(port=settings.port, password=secrets.token_urlsafe(18))
            self._initdb(bin_dir, user, settings)
        self.state_file.touch(mode=0o600)
        self.state_file.write_text(json.dumps(asdict(settings), indent=2) + "\n")
        socket_dir = self.directory / "socket"
        socket_dir.mkdir(exist_ok=True)
        self._own(user, socket_dir)
        command = [
            str(bin_dir / "postgres"), "-D", str(self.data_dir), "-p", str(settings.port),
            "-c", "listen_addresses=127.0.0.1", "-k", str(socket_dir),
        ]  # fmt: skip
        ready = partial(self._ready, bin_dir, settings.port)
        launch_as(
            command,
            user,
            log=self.log_file,
            pid_file=self.pid_file,
            ready=ready,
            port=settings.port,
            tied=tied,
        )
        self._create_database(bin_dir, settings)
        return settings

    def _initdb(self, bin_dir: Path, user: pwd.struct_passwd | None, settings: Settings) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._own(user, self.directory)
        password_file = self.directory / "initdb.password"
        password_file.touch(mode=0o600)
        password_file.write_text(settings.password + "\n")
        self._own(user, password_file)
        command = [
            str(bin_dir / "initdb"), "-D", str(self.data_dir), "-U", settings.user,
            "-A", "scram-sha-256", f"--pwfile={password_file}", "-E", "UTF8", "--no-locale",
        ]  # fmt: skip
        try:
            result = run_as(command, user)
        finally:
            password_file.unlink(missing_ok=True)
        if result.returncode != 0:
            raise MetastoreError(
                f"initdb of {self.data_dir} failed (exit {result.returncode})",
                detail=(result.stdout + result.stderr)[-2000:],
                hint=f"under root PostgreSQL runs as '{SERVICE_USER}', which must be able to "
                "enter every folder above it: choose another --dir (not in a private one)",
            )

    @staticmethod
    def _own(user: pwd.struct_passwd | None, path: Path) -> None:
        if user is not None:
            os.chown(path, user.pw_uid, user.pw_gid)

    def _ready(self, bin_dir: Path, port: int) -> bool:
        """The server accepts sessions (not only TCP: it refuses them while it starts)."""
        command = [str(bin_dir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port)]
        return subprocess.run(command, check=False).returncode == 0

    def _create_database(self, bin_dir: Path, settings: Settings) -> None:
        """The metastore's database, once (Spark's Hive client creates its tables in it)."""
        exists = f"SELECT 1 FROM pg_database WHERE datname = '{settings.database}'"
        if self.query(exists, bin_dir=bin_dir) != ["1"]:
            self.query(f"CREATE DATABASE {settings.database}", bin_dir=bin_dir)

    def query(self, sql: str, database: str = "postgres", bin_dir: Path | None = None) -> list[str]:
        """Run one statement with psql over TCP as the metastore's user; its output lines."""
        settings = self.settings()
        if settings is None:
            raise MetastoreError(f"no metastore in {self.directory}")
        command = [
            str((bin_dir or postgres_bin()) / "psql"), "-X", "-q", "-t", "-A",
            "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(settings.port),
            "-U", settings.user, "-d", database, "-c", sql,
        ]  # fmt: skip
        env = {**os.environ, "PGPASSWORD": settings.password}
        result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if result.returncode != 0:
            raise MetastoreError(f"psql failed on: {sql}", detail=result.stderr.strip())
        return result.stdout.splitlines()

    # -- stop, status ----------------------------------------------------------------------

    def stop(self) -> int | None:
        """Stop the server: SIGINT (PostgreSQL's fast shutdown: it does not wait for the
        Spark sessions still connected), then SIGTERM and SIGKILL. The data stays. Returns
        the PID it stopped, None when none ran."""
        pid = self.pid()
        if pid is not None:
            os.kill(pid, signal.SIGINT)
            if not wait_exit(pid, STOP_TIMEOUT_SECONDS):
                terminate(pid, STOP_TIMEOUT_SECONDS)
        self.pid_file.unlink(missing_ok=True)
        return pid

    def status(self) -> tuple[bool, str]:
        """(running, one line)."""
        settings, pid = self.settings(), self.pid()
        if settings is None:
            return False, f"no metastore in {self.directory}"
        state = f"running, pid {pid}" if pid is not None else "stopped"
        return pid is not None, (
            f"metastore {state}, {settings.url} user {settings.user} (log: {self.log_file})"
        )


def run_as(command: list[str], user: pwd.struct_passwd | None) -> subprocess.CompletedProcess[str]:
    """Run ``command`` to completion as ``user`` (None: as this process), without root's
    supplementary groups."""
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=False,
        user=user.pw_uid if user else None,
        group=user.pw_gid if user else None,
        extra_groups=[] if user else None,
    )


def launch_as(
    command: list[str],
    user: pwd.struct_passwd | None,
    *,
    log: Path,
    pid_file: Path,
    ready: partial[bool],
    port: int,
    tied: bool,
) -> int:
    """``runner.processes.launch`` of ``command`` as ``user``; its log file is owned by it."""
    log.touch()
    if user is not None:
        os.chown(log, user.pw_uid, user.pw_gid)
    return launch(
        command,
        what="metastore's PostgreSQL",
        log=log,
        pid_file=pid_file,
        env={**os.environ, "LC_ALL": "C"},
        ready=ready,
        port=port,
        tied=tied,
        run_as=(user.pw_uid, user.pw_gid) if user is not None else None,
    )


# -- command line ---------------------------------------------------------------------------

metastore_app = typer.Typer(
    help="A private PostgreSQL on 127.0.0.1 holding a shared Hive metastore (a target's "
    "catalog:). Example: python -m runner_devtools.metastore start",
    no_args_is_help=True,
    add_completion=False,
)

Directory = Annotated[
    Path | None,
    typer.Option(
        "--dir",
        help="Where the database, its log and metastore.json live (default: target/metastore "
        "in the project). Example: --dir /tmp/metastore",
    ),
]


def _metastore(project_dir: Path, directory: Path | None) -> LocalMetastore:
    return LocalMetastore(directory or project_dir / "target" / "metastore")


@metastore_app.command()
def start(
    port: Annotated[
        int,
        typer.Option(
            help="Port on first start (later starts reuse the recorded one); 0 picks a free "
            "one. Example: --port 54329"
        ),
    ] = 0,
    project_dir: ProjectDir = Path("."),
    directory: Directory = None,
    debug: Debug = False,
) -> None:
    """Create (first time) and start the metastore's PostgreSQL, then print the catalog to put
    in a target of project.yml and the password's variable.

    Example: python -m runner_devtools.metastore start
    """
    with reported_errors(debug):
        metastore = _metastore(project_dir, directory)
        settings = metastore.start(port)
        print(metastore.status()[1])
        print("catalog for a target in project.yml:")
        print("  catalog:\n    type: hive")
        print(f"    url: {settings.url}\n    user: {settings.user}")
        print(f"    password: \"{{{{ env_var('{PASSWORD_ENV}') }}}}\"")
        print(f"its password (owner-only in {metastore.state_file}):")
        print(f"  export {PASSWORD_ENV}=$(python -m runner_devtools.metastore password)")


@metastore_app.command()
def stop(
    project_dir: ProjectDir = Path("."), directory: Directory = None, debug: Debug = False
) -> None:
    """Stop the metastore's PostgreSQL (fast shutdown); its data stays for the next start.

    Example: python -m runner_devtools.metastore stop
    """
    with reported_errors(debug):
        pid = _metastore(project_dir, directory).stop()
        print(f"stopped: postgres (pid {pid})" if pid is not None else "nothing was running")


@metastore_app.command()
def status(
    project_dir: ProjectDir = Path("."), directory: Directory = None, debug: Debug = False
) -> None:
    """Running or stopped, PID, JDBC URL and log. Exit code 1 when it is not running.

    Example: python -m runner_devtools.metastore status
    """
    with reported_errors(debug):
        up, line = _metastore(project_dir, directory).status()
        print(line)
        if not up:
            raise typer.Exit(1)


@metastore_app.command()
def password(
    project_dir: ProjectDir = Path("."), directory: Directory = None, debug: Debug = False
) -> None:
    """Print the metastore user's password (for the variable a target's catalog reads).

    Example: export RUNNER_METASTORE_PASSWORD=$(python -m runner_devtools.metastore password)
    """
    with reported_errors(debug):
        metastore = _metastore(project_dir, directory)
        settings = metastore.settings()
        if settings is None:
            raise MetastoreError(
                f"no metastore in {metastore.directory}",
                hint="python -m runner_devtools.metastore start",
            )
        print(settings.password)


if __name__ == "__main__":
    metastore_app()
