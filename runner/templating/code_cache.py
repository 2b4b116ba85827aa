"""Compiled templates kept on disk between runs, as Python keeps ``__pycache__``: compiling every
model and macro file to Python was most of what loading a project cost, paid again by every
``runner lint`` of the edit loop although the templates had not changed.

Entries are Jinja's bytecode cache files, found by template name and (absolute) file and checked
against a checksum of the template's source, so an edited model or macro is compiled again.
They live outside the project, which loading never writes to: in ``RUNNER_TEMPLATE_CACHE`` if
set (set and empty: no cache), else ``$XDG_CACHE_HOME/delta-stream-runner/templates`` (default
``~/.cache``), in a directory named for everything else that decides the compiled code (this
format, Jinja's version, the environment's options); Python's version is in each entry. A cache
that cannot be created, read or written is no error: templates are then compiled as without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from jinja2.bccache import Bucket

from runner.user_cache import user_cache_dir

CACHE_ENV = "RUNNER_TEMPLATE_CACHE"
_FORMAT = "1"  # change when the way templates are registered or compiled changes
MAX_AGE_SECONDS = 7 * 24 * 3600  # entries written longer ago are removed (compiled again if used)
# Directories whose old entries this process has removed: once per process, before the first
# write, not once per cache object (each project load makes one; a process that loads many
# projects, as the tests do, would list the whole directory again for each).
_PRUNED: set[str] = set()


class TemplateCodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's file system bytecode cache that creates its directory and never fails."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            if self.directory not in _PRUNED:
                _PRUNED.add(self.directory)
                self._remove_old_entries()
            os.makedirs(self.directory, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:
            pass

    def _remove_old_entries(self) -> None:
        """Entries of edited, moved or deleted templates are never read again: remove those
        written more than MAX_AGE_SECONDS ago, so the cache does not grow without end."""
        oldest = time.time() - MAX_AGE_SECONDS
        for entry in Path(self.directory).glob("*.cache"):
            with contextlib.suppress(OSError):
                if entry.stat().st_mtime < oldest:
                    entry.unlink()


def cache_dir() -> Path | None:
    """Where compiled templates are kept; None when ``RUNNER_TEMPLATE_CACHE`` is set empty."""
    return user_cache_dir(CACHE_ENV, "templates")


def template_code_cache(options: Mapping[str, Any]) -> TemplateCodeCache | None:
    """The cache for an environment made with ``options`` (None: no cache)."""
    directory = cache_dir()
    if directory is None:
        return None
    settings = repr(sorted((key, _describe(value)) for key, value in options.items()))
    digest = hashlib.sha1(f"{_FORMAT}|{jinja2.__version__}|{settings}".encode()).hexdigest()
    return TemplateCodeCache(str(directory / digest[:16]))


def _describe(value: Any) -> str:
    """A stable text for an option (a class by its qualified name, not its address)."""
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)
