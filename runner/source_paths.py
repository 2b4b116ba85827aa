"""A file stream's ``path:`` checked before Spark starts: it must be a directory.

Files land in a directory and the stream reads each new one. A path that is a file is an error
(exit 2). A path that does not exist yet is not: a landing directory may be made by the first
file's writer. `run` and `stream` alike create it (Spark's file source lists it) and say so in
one warning naming the stream and the path, so a typo does not pass without a word: `run` then
has nothing to read, `stream` waits for files there. Pure Python.
"""

from __future__ import annotations

from runner.errors import ConfigError
from runner.project import Project
from runner.specs.model import ModelSpec
from runner.specs.stream import FILE_FORMATS


def check_source_paths(project: Project, models: list[ModelSpec], *, waits: bool) -> list[str]:
    """Raise a ConfigError naming the stream and its path when a selected model's file stream
    reads a file instead of a directory; create each missing path and return a warning for it
    (one per stream). ``waits``: `stream` (waits for files) rather than `run`."""
    warnings = []
    seen = set()
    for model in models:
        stream = project.stream_of(model)
        if stream.format not in FILE_FORMATS or stream.path is None or stream.name in seen:
            continue
        seen.add(stream.name)
        path, where = stream.path, f"stream '{stream.name}' ({stream.format})"
        if path.is_dir():
            continue
        if path.exists():
            raise ConfigError(
                f"{where}: path {path} is a file, not a directory: a stream reads the files "
                "that land in a directory",
                file=stream.file,
                line=stream.line,
                hint=f"set path: to the directory the files land in (this file's is {path.parent})",
            )
        path.mkdir(parents=True, exist_ok=True)
        then = "waiting for files to land there" if waits else "nothing to read yet"
        warnings.append(
            f"{stream.file}:{stream.line}: {where}: path {path} did not exist: created it, "
            f"{then} (if it is a typo, fix path: and delete that directory)"
        )
    return warnings
