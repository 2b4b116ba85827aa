"""The columns a model unit test fills: the stream's batch, the target table and its Change
Data Feed, as the project resolves them (a model's target columns come from its template)."""

from __future__ import annotations

from runner.errors import ConfigError
from runner.model_sql import target_columns
from runner.project import Project
from runner.specs.model import ModelSpec
from runner.specs.stream import CDF_COLUMNS, KAFKA_FORMAT
from runner.specs.values import Column, parse_columns


def batch_columns(project: Project, model: ModelSpec) -> list[Column]:
    """The columns of the model's micro-batches (its stream's schema)."""
    stream = project.stream_of(model)
    if stream.format == KAFKA_FORMAT:
        raise ConfigError(
            f"unit tests of '{model.name}': a Kafka stream's batches are raw Kafka records "
            "(key, value bytes, offsets), which unit tests cannot declare yet",
            file=model.file,
            line=model.config_line,
        )
    ddl = project.stream_columns_ddl(stream)
    if not ddl:
        raise ConfigError(
            f"unit tests of '{model.name}': the columns of stream '{stream.name}' are unknown",
            file=stream.file,
            line=stream.line,
        )
    return parse_columns(ddl)


def table_columns(project: Project, model: ModelSpec) -> list[Column]:
    return parse_columns(", ".join(target_columns(project, model)))


def change_columns(project: Project, model: ModelSpec) -> list[Column]:
    return [*table_columns(project, model), *parse_columns(CDF_COLUMNS)]
