"""``runner debug``: is this machine ready to run the project? One check per line, each with
what to do when it fails (dbt's ``debug``). Starts no JVM: Java is asked for its version, the
jar cache is read, a cluster or Connect address gets one TCP connection.

Pure Python apart from that one ``java -version`` process.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from runner.errors import RunnerError
from runner.project import Project
from runner.storage import Location, RemotePath

MIN_JAVA = 17  # Spark 4 runs on Java 17 and 21
_JAVA_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?[^"]*"')


@dataclass(frozen=True)
class Check:
    """The outcome of one check: what was found, and what to do when it failed."""

    name: str
    ok: bool
    found: str
    fix: str = ""


def run_checks(project: Project, java: Callable[[], Check] | None = None) -> list[Check]:
    """Every check, in the order a user would fix them."""
    return [
        (java or java_check)(),
        jars_check(),
        *storage_jars_check(project),
        target_check(project),
        writable_check("warehouse", project.target.warehouse),
        writable_check("checkpoints", project.target.checkpoint_root),
    ]


def java_executable() -> Path | None:
    """The java Spark will start: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        return Path(java_home) / "bin" / "java"
    found = shutil.which("java")
    return Path(found) if found else None


def java_check() -> Check:
    java = java_executable()
    fix = f"install Java {MIN_JAVA} or 21 and put it on PATH, or point JAVA_HOME at it"
    if java is None:
        return Check("java", False, "no java on PATH and JAVA_HOME is not set", fix)
    if not java.exists():
        return Check("java", False, f"JAVA_HOME is {os.environ['JAVA_HOME']}: no bin/java", fix)
    try:
        answer = subprocess.run(
            [str(java), "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("java", False, f"{java} -version failed: {exc}", fix)
    return parse_java_version(java, answer.stderr or answer.stdout)


def parse_java_version(java: Path, text: str) -> Check:
    """``openjdk version "17.0.15" ...`` -> ok when the major version is at least MIN_JAVA
    (``1.8.0`` is Java 8)."""
    match = _JAVA_VERSION.search(text)
    first = text.strip().splitlines()[0] if text.strip() else "(no output)"
    if match is None:
        return Check("java", False, f"{java}: cannot read a version in {first!r}", "")
    major = int(match.group(1))
    if major == 1 and match.group(2):
        major = int(match.group(2))
    found = f"{first} ({java})"
    if major < MIN_JAVA:
        return Check("java", False, found, f"Spark 4 needs Java {MIN_JAVA} or later: install it")
    return Check("java", True, found)


def jars_check(cache_dir: Path | None = None) -> Check:
    """Delta's jars in the cache: present, or fetched by the first command that needs Spark."""
    from runner.spark.session.jars import (
        cache_entry,
        cached_jars,
        default_cache_dir,
        delta_coordinates,
    )

    try:
        coordinates = delta_coordinates()
        entry = cache_entry(coordinates, cache_dir)
    except RunnerError as exc:
        return Check("jars", False, str(exc), "pip install the runner with its dependencies")
    jars = cached_jars(entry)
    where = cache_dir or default_cache_dir()
    if jars is None:
        return Check(
            "jars",
            False,
            f"{', '.join(coordinates)}: not in the cache {where}",
            "the first Spark command downloads them with mvn (needs Maven and the network), or "
            "set RUNNER_JARS_DIR to a cache that has them",
        )
    return Check("jars", True, f"{len(jars)} jars for {', '.join(coordinates)} in {entry}")


def storage_jars_check(project: Project, cache_dir: Path | None = None) -> list[Check]:
    """The connector of the target's object storage (S3A for ``s3a://``) in the cache; no
    check when warehouse and checkpoints are on a local disk."""
    from runner.spark.session.jars import (
        cache_entry,
        cached_jars,
        delta_coordinates,
        storage_coordinates,
    )

    try:
        connector = storage_coordinates(project.target)
        if not connector:
            return []
        entry = cache_entry(delta_coordinates() + connector, cache_dir)
    except RunnerError as exc:
        return [Check("storage jars", False, str(exc), "pip install the runner")]
    jars = cached_jars(entry)
    if jars is None:
        return [
            Check(
                "storage jars",
                False,
                f"{', '.join(connector)}: not in the cache yet",
                "the first Spark command on this target downloads them with mvn (needs Maven "
                "and the network)",
            )
        ]
    delta = {jar.name for jar in cached_jars(cache_entry(delta_coordinates(), cache_dir)) or []}
    own = [jar for jar in jars if jar.name not in delta]
    size = sum(jar.stat().st_size for jar in own) / 1e6
    found = f"{len(own)} jars ({size:.1f} MB) for {', '.join(connector[:1])} and its AWS SDK"
    return [Check("storage jars", True, f"{found} in {entry}")]


def target_check(project: Project) -> Check:
    """Local Spark needs nothing more; a cluster or Connect server must answer."""
    from runner.target_address import check_reachable

    target = project.target
    name = f"target {target.name}"
    if target.address is None:
        return Check(name, True, f"{target.master}: {local_spark(project)}")
    try:
        check_reachable(target.name, target.address)
    except RunnerError as exc:
        return Check(name, False, f"{target.shown}: {exc.message}", "start it, or pick another "
                     "target with --target")  # fmt: skip
    return Check(name, True, f"{target.shown}: answers")


def local_spark(project: Project) -> str:
    """Where a command on the local target runs Spark: this process, or the local server."""
    from runner.spark.session.local_server import server_choice

    try:
        choice = server_choice(project.target, project.root, [])
    except RunnerError as exc:  # a setting from env_var() that is not set: the session says so
        return f"Spark runs in this process ({exc.message})"
    if choice.target is not None:
        return f"commands use the local server {choice.target.remote} (runner server stop)"
    if choice.note is not None:
        return choice.note.removeprefix("not using the local server: ")
    return "Spark runs in this process (runner server start: a server commands reuse)"


def writable_check(what: str, location: Location) -> Check:
    """``location`` is writable, or can be created: its nearest existing folder is writable.
    A location on object storage is reached only by a Spark session: not checked here."""
    if isinstance(location, RemotePath):
        return Check(what, True, f"{location}: on object storage, reached when Spark starts")
    path = location
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    fix = f"make {existing} writable, or set the target's {what}: in project.yml"
    if existing.is_dir() and os.access(existing, os.W_OK | os.X_OK):
        state = "writable" if existing == path else f"will be created (in {existing})"
        return Check(what, True, f"{path}: {state}")
    kind = "not a directory" if existing.exists() and not existing.is_dir() else "not writable"
    return Check(what, False, f"{path}: {existing} is {kind}", fix)
