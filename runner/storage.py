"""Files under a target's warehouse and checkpoints, on a local disk or in object storage.

Besides what Spark and Delta write, the runner reads and writes a few files there itself: a
checkpoint's ``metadata`` and logs, its owner record, the last run, a table's ``_delta_log``, the
handover of a backfill. Every such access goes through this module. A local path uses the
filesystem directly; a location with a scheme (``s3a://``, ``abfss://``, ``gs://``) goes through
Hadoop's FileSystem in the JVM of the session, the code Spark and Delta write it with, which
``runner/spark/session/hadoop_files.py`` registers here when a session starts. Before a session
exists, or on a Spark Connect target (no JVM in this process), an operation on such a location
raises StorageUnavailable saying what could not be done.

Writes replace a file whole: on a local disk a temp file renamed over it, on object storage one
PUT (an object is never seen half-written). Pure Python: never imports pyspark.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Protocol

from runner.errors import RunnerError

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*)://(.*)$")


class StorageUnavailable(RunnerError):
    """A file on object storage that this process cannot reach (no session's JVM here)."""


@dataclass(frozen=True)
class RemotePath:
    """A location on object storage: ``s3a://bucket/path`` (no trailing slash). Joins with ``/``
    and has ``name`` and ``parent``, as a ``Path`` has."""

    uri: str

    @property
    def scheme(self) -> str:
        return self.uri.split("://", 1)[0].lower()

    def __truediv__(self, part: str | PurePath) -> RemotePath:
        text = part.as_posix() if isinstance(part, PurePath) else part
        return RemotePath(f"{self.uri}/{text.strip('/')}")

    @property
    def name(self) -> str:
        return self.uri.rsplit("/", 1)[-1] if "/" in self._path else ""

    @property
    def parent(self) -> RemotePath:
        if "/" not in self._path:
            return self
        return RemotePath(self.uri.rsplit("/", 1)[0])

    @property
    def _path(self) -> str:
        """What follows the scheme: ``bucket/path``."""
        return self.uri.split("://", 1)[1]

    def __str__(self) -> str:
        return self.uri


Location = Path | RemotePath


def parse_location(text: str, root: Path) -> Location:
    """A warehouse or checkpoint root as project.yml gives it: ``scheme://...`` is on object
    storage (``file://`` is a local path); anything else a path relative to ``root``."""
    found = _SCHEME.match(text.strip())
    if found is None:
        return (root / text).resolve()
    if found.group(1).lower() == "file":
        return Path("/" + found.group(2).lstrip("/"))
    return RemotePath(text.strip().rstrip("/"))


def same_location(text: str, location: Location) -> bool:
    """Whether ``text`` (a location as Spark's catalog gives it) names ``location``."""
    if isinstance(location, RemotePath):
        return text.rstrip("/") == location.uri
    return Path(text) == location


def scheme_of(location: Location) -> str | None:
    """``'s3a'`` for ``s3a://...``; None for a local path."""
    return location.scheme if isinstance(location, RemotePath) else None


class RemoteFiles(Protocol):
    """What this module asks of object storage (implemented over Hadoop's FileSystem)."""

    def exists(self, uri: str) -> bool: ...
    def is_dir(self, uri: str) -> bool: ...
    def list_names(self, uri: str) -> list[str]: ...
    def read(self, uri: str) -> bytes: ...
    def write(self, uri: str, data: bytes) -> None: ...
    def delete(self, uri: str) -> bool: ...
    def files_under(self, uri: str) -> list[str]: ...
    def modified_ms(self, uri: str) -> float | None: ...


class _NoRemoteFiles:
    """Before a session: every operation says what it needed."""

    def __init__(self, why: str) -> None:
        self.why = why

    def _refuse(self, what: str, uri: str) -> StorageUnavailable:
        return StorageUnavailable(f"cannot {what} {uri}: {self.why}")

    def exists(self, uri: str) -> bool:
        raise self._refuse("look for", uri)

    def is_dir(self, uri: str) -> bool:
        raise self._refuse("look for", uri)

    def list_names(self, uri: str) -> list[str]:
        raise self._refuse("list", uri)

    def read(self, uri: str) -> bytes:
        raise self._refuse("read", uri)

    def write(self, uri: str, data: bytes) -> None:
        raise self._refuse("write", uri)

    def delete(self, uri: str) -> bool:
        raise self._refuse("delete", uri)

    def files_under(self, uri: str) -> list[str]:
        raise self._refuse("list", uri)

    def modified_ms(self, uri: str) -> float | None:
        raise self._refuse("look for", uri)


_NO_SESSION = _NoRemoteFiles(
    "files on object storage are reached through Hadoop's FileSystem in a Spark session's JVM, "
    "and this command has not started one"
)
_remote: RemoteFiles = _NO_SESSION


def use_remote_files(files: RemoteFiles | None) -> None:
    """Reach object storage through ``files`` from now on (None: no longer)."""
    global _remote
    _remote = files if files is not None else _NO_SESSION


def refuse_remote_files(why: str) -> None:
    """Object storage cannot be reached from this process, for the reason ``why``."""
    use_remote_files(_NoRemoteFiles(why))


def reachable(location: Location) -> bool:
    """Whether this process can reach ``location`` now: a local path, or object storage once a
    session's JVM is there."""
    return isinstance(location, Path) or not isinstance(_remote, _NoRemoteFiles)


def exists(location: Location) -> bool:
    if isinstance(location, RemotePath):
        return _remote.exists(location.uri)
    return location.exists()


def is_dir(location: Location) -> bool:
    if isinstance(location, RemotePath):
        return _remote.is_dir(location.uri)
    return location.is_dir()


def is_file(location: Location) -> bool:
    if isinstance(location, RemotePath):
        return _remote.exists(location.uri) and not _remote.is_dir(location.uri)
    return location.is_file()


def names_in(location: Location) -> list[str]:
    """The names of the entries of a directory (files and folders), sorted; none when it is not
    there."""
    if isinstance(location, RemotePath):
        return sorted(_remote.list_names(location.uri))
    try:
        return sorted(os.listdir(location))
    except (FileNotFoundError, NotADirectoryError):
        return []


def read_bytes(location: Location) -> bytes:
    """The file's content; FileNotFoundError when it is not there."""
    if isinstance(location, RemotePath):
        return _remote.read(location.uri)
    return location.read_bytes()


def read_text(location: Location) -> str:
    """The file's UTF-8 text; FileNotFoundError when it is not there, UnicodeDecodeError when
    it is not UTF-8."""
    return read_bytes(location).decode("utf-8")


def write_text(location: Location, text: str) -> None:
    """Replace the file with ``text`` whole (a reader or a kill never sees half of it),
    creating its folder."""
    data = text.encode("utf-8")
    if isinstance(location, RemotePath):
        _remote.write(location.uri, data)
        return
    location.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=location.parent, prefix=f".{location.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, location)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def remove(location: Location) -> bool:
    """Delete a file or a folder with all it holds; False when nothing was there."""
    if isinstance(location, RemotePath):
        return _remote.delete(location.uri)
    if location.is_dir() and not location.is_symlink():
        shutil.rmtree(location)
        return True
    try:
        location.unlink()
    except FileNotFoundError:
        return False
    return True


def files_under(location: Location) -> Iterator[Location]:
    """Every file under a folder, at any depth; none when it is not there."""
    if isinstance(location, RemotePath):
        yield from (RemotePath(uri) for uri in _remote.files_under(location.uri))
        return
    if location.is_dir():
        yield from (path for path in location.rglob("*") if path.is_file())


def modified_ms(location: Location) -> float | None:
    """When the file was last written (milliseconds since the epoch); None when it is not
    there."""
    if isinstance(location, RemotePath):
        return _remote.modified_ms(location.uri)
    try:
        return location.stat().st_mtime_ns / 1e6
    except OSError:
        return None


def relative_parts(location: Location, under: Location) -> tuple[str, ...]:
    """The folder names and file name of ``location`` below ``under``."""
    if isinstance(location, RemotePath) and isinstance(under, RemotePath):
        return tuple(location.uri[len(under.uri) :].strip("/").split("/"))
    assert isinstance(location, Path) and isinstance(under, Path)
    return location.relative_to(under).parts
