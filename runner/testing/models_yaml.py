"""The YAML files beside the models (``models/*.yml``), which declare data tests and unit tests;
read once."""

from __future__ import annotations

from typing import Any

from runner.errors import ConfigError
from runner.project import Project
from runner.testing.layout import project_folder, yaml_files
from runner.yaml_loader import YamlMap, check_keys, load_yaml

TEST_DOCUMENT_KEYS = ("version", "models", "unit_tests")


def models_yaml_documents(project: Project) -> list[YamlMap]:
    """Every ``models/*.yml`` document (each may hold ``models:`` and ``unit_tests:``)."""
    documents = [load_yaml(file) for file in yaml_files(project_folder(project, "models"))]
    for document in documents:
        check_keys(document, TEST_DOCUMENT_KEYS, str(document.file.name if document.file else ""))
    return documents


def require_map(value: Any, what: str, parent: YamlMap, key: Any) -> YamlMap:
    """``value`` (found under ``parent[key]``) as a mapping, or a ConfigError at its line."""
    if not isinstance(value, YamlMap):
        raise ConfigError(
            f"{what} must be a mapping, got {type(value).__name__}",
            file=parent.file,
            line=parent.line_of(key),
        )
    return value


__all__ = ["check_keys", "models_yaml_documents", "require_map"]
