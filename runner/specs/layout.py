"""Where a project keeps its files (project.yml's ``paths:``), and what the spec loaders read of
a loaded project."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from runner.yaml_loader import load_yaml

if TYPE_CHECKING:
    from runner.specs.model import ModelSpec

PROJECT_FILE = "project.yml"
DEFAULT_PATHS = {
    "models": "models",
    "macros": "macros",
    "streams": "streams",
    "seeds": "seeds",
    "tests": "tests",  # singular data tests: tests/*.sql (runner/specs/singular.py)
}


class DeclaredProject(Protocol):
    """What the loaders of seeds, tests and descriptions read of a loaded project
    (``runner.project.Project`` is one): its folder and its models, by name."""

    @property
    def root(self) -> Path: ...

    @property
    def models(self) -> Mapping[str, ModelSpec]: ...


def project_folder(root: Path, kind: str) -> Path:
    """The folder of ``kind`` (``models``, ``seeds``, ...) under the project root ``root``."""
    paths = load_yaml(root / PROJECT_FILE).child("paths")
    return root / str(paths.get(kind, DEFAULT_PATHS[kind]))


def yaml_files(folder: Path) -> list[Path]:
    """The ``*.yml`` and ``*.yaml`` files directly in ``folder``, sorted (none if it is absent)."""
    if not folder.is_dir():
        return []
    return sorted([*folder.glob("*.yml"), *folder.glob("*.yaml")])
