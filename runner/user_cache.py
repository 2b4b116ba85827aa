"""Where the runner keeps what it can compute again (compiled templates, lint results): outside
the project, which commands that only read it never write to.

Each cache has its own environment variable: set, it names the directory; set and empty, that
cache is off. Unset, the directory is ``$XDG_CACHE_HOME/delta-stream-runner/<kind>`` (default
``~/.cache``).
"""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir(variable: str, kind: str) -> Path | None:
    """The directory of the ``kind`` cache; None when ``variable`` is set empty (cache off)."""
    chosen = os.environ.get(variable)
    if chosen is not None:
        return Path(chosen) if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "delta-stream-runner" / kind
