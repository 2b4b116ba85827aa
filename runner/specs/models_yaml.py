"""The YAML files beside the models (``models/*.yml``), which declare data tests and unit tests;
read once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runner.errors import ConfigError
from runner.specs.layout import DeclaredProject, project_folder, yaml_files
from runner.yaml_loader import YamlMap, check_keys, load_yaml

TEST_DOCUMENT_KEYS = ("version", "models", "unit_tests")


def models_yaml_documents(project: DeclaredProject) -> list[YamlMap]:
    """Every ``models/*.yml`` document (each may hold ``models:`` and ``unit_tests:``)."""
    documents = [load_yaml(file) for file in yaml_files(project_folder(project.root, "models"))]
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


@dataclass(frozen=True)
class ModelDocs:
    """The ``description:`` of a model and of its columns in ``models/*.yml``."""

    description: str = ""
    columns: dict[str, str] = field(default_factory=dict)


def model_descriptions(project: DeclaredProject) -> dict[str, ModelDocs]:
    """Each model's descriptions from ``models:`` in ``models/*.yml`` (the keys are checked
    where the data tests are read, runner/specs/data_tests.py); models without any are left
    out."""
    found: dict[str, ModelDocs] = {}
    for doc in models_yaml_documents(project):
        models = doc.child("models")
        for name in models:
            raw = models.get(name)
            if not isinstance(raw, YamlMap) or name not in project.models:
                continue
            columns = raw.get("columns") or {}
            pairs = (
                [(c.get("name"), c) for c in columns if isinstance(c, YamlMap)]
                if isinstance(columns, list)
                else [(k, v) for k, v in columns.items() if isinstance(v, YamlMap)]
                if isinstance(columns, YamlMap)
                else []
            )
            column_docs = {
                str(column): description_of(spec, f"column '{column}'")
                for column, spec in pairs
                if spec.get("description") is not None
            }
            text = description_of(raw, f"model '{name}'")
            if text or column_docs:  # a model may be documented in several files
                before = found.get(str(name), ModelDocs())
                columns_all = {**before.columns, **column_docs}
                found[str(name)] = ModelDocs(text or before.description, columns_all)
    return found


def description_of(raw: YamlMap, what: str) -> str:
    """``raw['description']`` as text ('' when absent); anything but text is an error."""
    value = raw.get("description")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ConfigError(
            f"{what}: description must be text, got {type(value).__name__}",
            file=raw.file,
            line=raw.line_of("description"),
        )
    return value.strip()


__all__ = [
    "ModelDocs",
    "check_keys",
    "description_of",
    "model_descriptions",
    "models_yaml_documents",
    "require_map",
]
