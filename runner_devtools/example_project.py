"""A copy of this repository's example project (models, streams, macros, seeds, sample data),
for the tests and the tools that run it somewhere else than the repository."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PARTS = ("project.yml", "models", "macros", "streams", "seeds", "sample_data")


def copy_example(root: Path) -> Path:
    """Copy the example project into ``root`` (created; it must not exist). Returns ``root``."""
    root.mkdir(parents=True)
    for item in PARTS:
        source = REPO / item
        if source.is_dir():
            shutil.copytree(source, root / item)
        elif source.exists():
            shutil.copy2(source, root / item)
    return root
