"""Load a project directory into typed specs: project.yml, streams/, models/, macros/.

Pure Python: nothing here imports pyspark. Every error names the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from runner.ddl import column_names
from runner.errors import ConfigError, RunnerError, TemplateError
from runner.project_settings import load_lint_settings, load_target
from runner.specs.kafka import KAFKA_COLUMNS_DDL
from runner.specs.layout import DEFAULT_PATHS, PROJECT_FILE
from runner.specs.lint import LintSettings
from runner.specs.model import ModelConfig, ModelSpec, build_model_config, config_argument_lines
from runner.specs.stream import (
    CDF_COLUMNS,
    KAFKA_FORMAT,
    LINE_FORMATS,
    RESCUED_COLUMN_DDL,
    StreamSpec,
)
from runner.specs.target import TargetSpec
from runner.streams import load_streams
from runner.templating.context import ParseRecord, Relation, parse_mode_context
from runner.templating.environment import TemplateEnvironment
from runner.yaml_loader import check_keys, load_yaml

# The keys project.yml may set (runner/yaml_loader.py checks them).
PROJECT_KEYS = ("name", "paths", "vars", "default_target", "targets", "lint", "clean-targets")
_CONFIG_CALL = re.compile(r"\{\{-?\s*config\s*\(")


@dataclass
class Project:
    """A loaded project. Specs are immutable; the template environment renders models."""

    name: str
    root: Path
    target: TargetSpec
    vars: dict[str, Any]
    streams: dict[str, StreamSpec]
    models: dict[str, ModelSpec]
    templates: TemplateEnvironment
    lint: LintSettings = field(default_factory=LintSettings)
    # model file -> why it did not load; filled only by load(..., tolerate_model_errors=True)
    model_errors: dict[Path, RunnerError] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # shown by commands, e.g. deprecations
    _template_names: dict[str, str] = field(default_factory=dict)

    def model(self, name: str) -> ModelSpec:
        if name not in self.models:
            known = ", ".join(sorted(self.models)) or "(none)"
            raise ConfigError(
                f"no model named '{name}'",
                hint=f"models in {self.root / 'models'}: {known}",
            )
        return self.models[name]

    def stream_of(self, model: ModelSpec) -> StreamSpec:
        return self.streams[model.config.stream or ""]

    @cached_property
    def models_by_target(self) -> dict[str, ModelSpec]:
        """Each model by the lower-cased name of the table it writes (built once: lint rules
        look writers up for every model)."""
        return {m.target_table.lower(): m for m in self.models.values()}

    def target_columns_ddl(self, model: ModelSpec) -> str | None:
        """The columns of a model's target, as DDL: its ``config(columns=...)``, or else the
        columns of its stream; None when neither is known statically."""
        return model.config.columns or self.stream_columns_ddl(self.stream_of(model))

    def target_column_names(self, model: ModelSpec) -> list[str]:
        """The names of a model's target columns, in order, backticks kept where the DDL has
        them (``target_columns_ddl``); [] when they are not known statically."""
        ddl = self.target_columns_ddl(model)
        return column_names(ddl) if ddl else []

    def stream_columns_ddl(self, stream: StreamSpec) -> str | None:
        """The columns a stream's micro-batches have, as DDL, when they are known statically.

        A stream of another model's target has that target's columns, plus the Change Data
        Feed's own columns when it reads the feed; a Kafka stream has its value's columns plus
        the record's key, topic, partition, offset and timestamp.
        """
        if stream.ref and stream.ref in self.models:
            upstream = self.models[stream.ref]
            ddl = self.target_columns_ddl(upstream)
            if ddl and stream.change_data_feed:
                ddl = f"{ddl}, {CDF_COLUMNS}"
            return ddl
        if stream.format == KAFKA_FORMAT and stream.columns_ddl:
            return f"{stream.columns_ddl}, {KAFKA_COLUMNS_DDL}"  # kafka_source adds them
        if stream.format in LINE_FORMATS and stream.columns_ddl:
            return f"{stream.columns_ddl}, {RESCUED_COLUMN_DDL}"  # file_source adds it
        return stream.columns_ddl

    def stream_column_names(self, stream_name: str | None) -> list[str] | None:
        """The column names of the stream ``stream_name`` when they are known statically
        (``stream_columns_ddl``); None for an unknown stream or undeclared columns."""
        stream = self.streams.get(str(stream_name))
        ddl = self.stream_columns_ddl(stream) if stream else None
        return column_names(ddl) if ddl else None

    def template_name(self, model: ModelSpec) -> str:
        return self._template_names[model.name]

    def ref(self, name: str) -> Relation:
        """``ref('orders_merge')`` in a template: the target table of another model."""
        if name not in self.models:
            raise TemplateError(f"ref('{name}'): no such model")
        return Relation(self.models[name].target_table)


def load(
    root: Path | str = ".",
    target: str | None = None,
    cli_vars: Mapping[str, Any] | None = None,
    *,
    tolerate_model_errors: bool = False,
) -> Project:
    """Load the project in ``root`` for ``target`` (default: project.yml's default_target).

    With ``tolerate_model_errors`` (used by ``runner lint``), a model file that fails to load is
    left out and its error kept in ``Project.model_errors``, and a ``ref`` to an unknown model is
    not an error here: the linter reports both as findings located in the model.
    """
    root = Path(root).resolve()
    project_file = root / PROJECT_FILE
    if not project_file.exists():
        raise ConfigError(
            f"no {PROJECT_FILE} in {root}",
            hint="run the command from the project directory or pass --project-dir",
        )
    doc = load_yaml(project_file)
    check_keys(doc, PROJECT_KEYS, PROJECT_FILE)
    check_keys(doc.child("paths"), DEFAULT_PATHS, "paths")
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError("project.yml must set 'name'", file=project_file, line=doc.line)
    paths = {**DEFAULT_PATHS, **{k: str(v) for k, v in doc.child("paths").items()}}
    target_spec = load_target(doc, root, target)
    project_vars = {**doc.child("vars"), **(cli_vars or {})}

    streams, warnings = load_streams(root / paths["streams"], root)
    macro_dir = root / paths["macros"]
    macro_files = sorted(macro_dir.glob("*.sql")) if macro_dir.is_dir() else []
    templates = TemplateEnvironment(macro_files, keep_compiled=True)
    project = Project(
        name=name,
        root=root,
        target=target_spec,
        vars=project_vars,
        streams=streams,
        models={},
        templates=templates,
        lint=load_lint_settings(doc),
        warnings=warnings,
    )
    model_dir = root / paths["models"]
    for file in sorted(model_dir.glob("*.sql")) if model_dir.is_dir() else []:
        try:
            model = _parse_model(project, file)
        except RunnerError as exc:
            if not tolerate_model_errors:
                raise
            project.model_errors[file] = exc
            continue
        if model.config.enabled:
            project.models[model.name] = model
    if not tolerate_model_errors:
        _check_refs(project)
    _check_target_writers(project)
    return project


# -- models --------------------------------------------------------------------------------


def _parse_model(project: Project, file: Path) -> ModelSpec:
    """Render a model in parse mode to collect its config() and ref() calls."""
    name = file.stem
    source = file.read_text(encoding="utf-8")
    match = _CONFIG_CALL.search(source)
    config_line = source.count("\n", 0, match.start()) + 1 if match else 1
    template_name = project.templates.add_model(name, file, source)
    project._template_names[name] = template_name

    record = ParseRecord()
    context = parse_mode_context(
        name,
        record,
        project_vars=project.vars,
        target_name=project.target.name,
        stream_columns=project.stream_column_names,
    )
    project.templates.render(template_name, context)
    if record.config.calls == 0:
        raise ConfigError(
            "model has no {{ config(...) }} call",
            file=file,
            line=1,
            hint="start the model with {{ config(stream='orders', target='silver.orders', "
            "unique_key='order_id') }}",
        )
    key_lines = config_argument_lines(source, match.end()) if match else {}
    config: ModelConfig = build_model_config(
        record.config.recorded, file=file, line=config_line, key_lines=key_lines
    )
    if config.stream not in project.streams:
        raise ConfigError(
            f"config(stream='{config.stream}'): no such stream",
            file=file,
            line=key_lines.get("stream", config_line),
            hint=f"streams declared in streams/: {', '.join(sorted(project.streams)) or '(none)'}",
        )
    return ModelSpec(
        name=name,
        file=file,
        source=source,
        config=config,
        config_line=config_line,
        refs=tuple(dict.fromkeys(record.refs)),
        config_lines=tuple(key_lines.items()),
    )


def _check_target_writers(project: Project) -> None:
    """One writer per target table, unless every model that writes it declares
    ``shared_target=true``: two MERGEs with their own checkpoints into one table is rarely
    meant, and the manifest (one entry per target) would keep only one of them."""
    writers: dict[str, ModelSpec] = {}
    for model in sorted(project.models.values(), key=lambda m: m.file):
        table = model.target_table.lower()
        first = writers.setdefault(table, model)
        if first is model or (first.config.shared_target and model.config.shared_target):
            continue
        where = f"{_shown(project, first.file)}:{first.config_line_of('target')}"
        raise ConfigError(
            f"models {first.name} ({where}) and {model.name} both write {model.target_table}",
            file=model.file,
            line=model.config_line_of("target"),
            hint="give each model its own target, or, if both are meant to write this table, "
            "set shared_target=true in the config() of each",
        )


def _shown(project: Project, file: Path) -> str:
    try:
        return file.relative_to(project.root).as_posix()
    except ValueError:
        return str(file)


def _check_refs(project: Project) -> None:
    for stream in project.streams.values():
        if stream.ref and stream.ref not in project.models:
            raise ConfigError(
                f"stream '{stream.name}': ref: {stream.ref} names no model",
                file=stream.file,
                line=stream.line,
                hint=f"models: {', '.join(sorted(project.models))}",
            )
    for model in project.models.values():
        for other in model.refs:
            if other not in project.models:
                raise ConfigError(
                    f"ref('{other}'): no model named '{other}'",
                    file=model.file,
                    hint=f"models: {', '.join(sorted(project.models))}",
                )
