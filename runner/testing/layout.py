"""Where a project keeps its seeds and its test YAML (project.yml's ``paths:``)."""

from __future__ import annotations

from pathlib import Path

from runner.project import DEFAULT_PATHS, PROJECT_FILE, Project
from runner.yaml_loader import load_yaml


def project_folder(project: Project, kind: str) -> Path:
    """The folder of ``kind`` (``models``, ``seeds``, ...) under the project root."""
    paths = load_yaml(project.root / PROJECT_FILE).child("paths")
    return project.root / str(paths.get(kind, DEFAULT_PATHS[kind]))


def yaml_files(folder: Path) -> list[Path]:
    """The ``*.yml`` and ``*.yaml`` files directly in ``folder``, sorted (none if it is absent)."""
    if not folder.is_dir():
        return []
    return sorted([*folder.glob("*.yml"), *folder.glob("*.yaml")])
