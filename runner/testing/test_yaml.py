"""The YAML files beside the models that declare tests (``models/*.yml``), read once."""

from __future__ import annotations

from typing import Any

from runner.errors import ConfigError
from runner.project import Project
from runner.testing.layout import project_folder, yaml_files
from runner.yaml_loader import YamlMap, load_yaml


def test_documents(project: Project) -> list[YamlMap]:
    """Every ``models/*.yml`` document (each may hold ``models:`` and ``unit_tests:``)."""
    return [load_yaml(file) for file in yaml_files(project_folder(project, "models"))]


def require_map(value: Any, what: str, parent: YamlMap, key: Any) -> YamlMap:
    """``value`` (found under ``parent[key]``) as a mapping, or a ConfigError at its line."""
    if not isinstance(value, YamlMap):
        raise ConfigError(
            f"{what} must be a mapping, got {type(value).__name__}",
            file=parent.file,
            line=parent.line_of(key),
        )
    return value


def check_keys(raw: YamlMap, allowed: tuple[str, ...], what: str) -> None:
    """A ConfigError at the first key of ``raw`` not in ``allowed`` (typos)."""
    unknown = [str(k) for k in raw if str(k) not in allowed]
    if unknown:
        raise ConfigError(
            f"{what}: unknown key '{unknown[0]}'",
            file=raw.file,
            line=raw.line_of(unknown[0]),
            hint=f"known keys: {', '.join(allowed)}",
        )
