"""Lint results kept between runs of ``runner lint``, as ruff keeps its cache: a run whose
inputs are all unchanged prints the findings of the run before instead of rendering, parsing
and checking every model again.

What decides the findings, and so the key of a result:

- the project's files: ``project.yml`` and every file under the folders it reads (models,
  macros, streams, seeds, tests): by content, or by size and modification time above 1 MiB;
- the environment variables those files read with ``env_var('NAME')``; a file that calls
  ``env_var`` with a computed name makes the project uncacheable (the result is computed);
- the command's options (``--target``, ``--vars``, ``--select``, ``--exclude``); ``--state``
  and ``--analyze`` are never cached (they read a manifest or a JVM);
- the code that lints: every file of the installed runner package, and the installed sqlglot,
  Jinja and PyYAML (by size and modification time, so an upgrade or an edit counts), and
  Python's version.

One entry per project directory, replaced by each computed run; entries of projects not linted
for a week are removed. Set ``RUNNER_LINT_CACHE`` to
move the directory, or empty to turn the cache off (``runner lint --no-cache`` for one run).
A cache that cannot be read or written is no error: the findings are then computed.
Imports neither sqlglot nor the rules, so a run that hits the cache loads neither.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import yaml

from runner.lint.findings import LintResult, Violation
from runner.specs.layout import DEFAULT_PATHS
from runner.user_cache import user_cache_dir

CACHE_ENV = "RUNNER_LINT_CACHE"
_FORMAT = "1"  # change when the entry's layout or what the key covers changes
MAX_AGE_SECONDS = 7 * 24 * 3600  # entries not rewritten for longer are removed
_HASHED_UP_TO = 1 << 20  # larger files (a seed's CSV) count by size and modification time
_LIBRARIES = ("sqlglot", "jinja2", "yaml")
_ENV_VAR_CALL = re.compile(
    r"\benv_var\s*\(\s*"
    r"(?:(?P<quote>['\"])(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P=quote)\s*(?=[,)]))?"
)


def result_key(
    root: Path,
    *,
    target: str | None,
    cli_vars: Mapping[str, Any],
    select: list[str] | None,
    exclude: list[str] | None,
) -> str | None:
    """The key of the lint result of the project at ``root`` with these options, or None when
    it cannot be cached (an unreadable ``project.yml``, an ``env_var`` with a computed name)."""
    digest = hashlib.sha256()

    def add(*parts: object) -> None:
        digest.update(json.dumps(parts, default=repr).encode())
        digest.update(b"\0")

    add(_FORMAT, sys.version, *_code_fingerprint())
    root = root.resolve()
    add(str(root), target, sorted(cli_vars.items(), key=str), select, exclude)
    folders = _project_folders(root)
    if folders is None:
        return None
    names: set[str] = set()
    for path in [root / "project.yml", *(f for d in folders for f in _files(d))]:
        try:
            stat = path.stat()
            if stat.st_size > _HASHED_UP_TO:
                add(str(path), stat.st_size, stat.st_mtime_ns)
                continue
            data = path.read_bytes()
        except OSError:
            return None
        add(str(path), hashlib.sha256(data).hexdigest())
        for call in _ENV_VAR_CALL.finditer(data.decode("utf-8", errors="replace")):
            if call["name"] is None:
                return None  # which variable it reads is known only when it renders
            names.add(call["name"])
    add(sorted((name, os.environ.get(name)) for name in names))
    return digest.hexdigest()


def cached_result(root: Path, key: str) -> LintResult | None:
    """The result stored for ``root`` under ``key``, or None."""
    entry = _entry(root)
    if entry is None:
        return None
    try:
        stored = json.loads(entry.read_text(encoding="utf-8"))
        if stored.get("key") != key:
            return None
        os.utime(entry)  # in use: kept by the clean-up of old entries
        return LintResult(
            root=root.resolve(),
            violations=tuple(Violation(**v) for v in stored["violations"]),
            models=stored["models"],
            statements=stored["statements"],
            seconds=stored["seconds"],
            cached=True,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store_result(root: Path, key: str, result: LintResult) -> None:
    """Keep ``result`` for ``root`` under ``key`` (replacing the entry before it)."""
    entry = _entry(root)
    if entry is None:
        return
    stored = {
        "key": key,
        "violations": [asdict(v) for v in result.violations],
        "models": result.models,
        "statements": result.statements,
        "seconds": result.seconds,
    }
    with contextlib.suppress(OSError):
        entry.parent.mkdir(parents=True, exist_ok=True)
        _remove_old_entries(entry.parent)
        partial = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(stored), encoding="utf-8")
        partial.replace(entry)  # whole or absent: a concurrent run never reads half an entry


def _remove_old_entries(directory: Path) -> None:
    """Entries of projects not linted for MAX_AGE_SECONDS (a CI run's temporary clone, a
    deleted project): removed, so the cache does not grow without end."""
    oldest = time.time() - MAX_AGE_SECONDS
    for old in directory.glob("*.json"):
        with contextlib.suppress(OSError):
            if old.stat().st_mtime < oldest:
                old.unlink()


def _entry(root: Path) -> Path | None:
    directory = user_cache_dir(CACHE_ENV, "lint")
    if directory is None:
        return None
    name = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:24]
    return directory / f"{name}.json"


def _code_fingerprint() -> list[object]:
    """Size and modification time of every file of the runner package and of the libraries
    whose behaviour decides findings: an upgrade or an edit of any of them changes the key."""
    package = Path(__file__).resolve().parents[1]
    parts: list[object] = [
        (str(path.relative_to(package)), stat.st_size, stat.st_mtime_ns)
        for path, stat in _stats(_files(package))
    ]
    for library in _LIBRARIES:
        spec = find_spec(library)
        origin = spec.origin if spec else None
        with contextlib.suppress(OSError):
            stat = os.stat(origin) if origin else None
            parts.append((library, origin, stat and (stat.st_size, stat.st_mtime_ns)))
    return parts


def _stats(paths: Iterator[Path]) -> Iterator[tuple[Path, os.stat_result]]:
    for path in paths:
        with contextlib.suppress(OSError):
            yield path, path.stat()


def _project_folders(root: Path) -> list[Path] | None:
    """The folders ``load`` reads, from project.yml's ``paths`` (None: project.yml unreadable,
    which the computed run reports)."""
    try:
        doc = yaml.safe_load((root / "project.yml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(doc, dict):
        return None
    paths = doc.get("paths") or {}
    if not isinstance(paths, dict):
        return None
    chosen = {**DEFAULT_PATHS, **{str(k): str(v) for k, v in paths.items()}}
    return [root / folder for folder in sorted(set(chosen.values()))]


def _files(folder: Path) -> Iterator[Path]:
    """Every file under ``folder`` in a stable order, without Python's bytecode caches."""
    for directory, subdirectories, files in os.walk(folder):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        for name in sorted(files):
            yield Path(directory) / name
