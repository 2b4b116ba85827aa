"""Run one model's stream in this process: the task behind `runner stream` and `runner run`."""

from __future__ import annotations

import threading
from collections.abc import Callable

from pyspark.sql import SparkSession

from runner.config import KAFKA_FORMAT, ModelSpec, TriggerSpec
from runner.project import Project
from runner.spark.batch import BatchReport
from runner.spark.jars import pyspark_version
from runner.spark.kafka_source import connector_coordinates
from runner.spark.query import start_model, wait_for
from runner.spark.session import build_session


def session_for(project: Project) -> SparkSession:
    return build_session(
        project.target, app_name=f"runner:{project.name}", extra_jars=extra_jars_for(project)
    )


def extra_jars_for(project: Project) -> list[str]:
    """Maven coordinates the project's sources need beyond Delta: Spark's Kafka connector when
    a stream reads Kafka (so projects without Kafka do not download it)."""
    if any(stream.format == KAFKA_FORMAT for stream in project.streams.values()):
        return connector_coordinates(pyspark_version())
    return []


def stream_model(
    project: Project,
    model: ModelSpec,
    *,
    trigger: TriggerSpec | None = None,
    on_batch: Callable[[BatchReport], None] | None = None,
    stop: threading.Event | None = None,
    spark: SparkSession | None = None,
) -> bool:
    """Stream ``model`` until its trigger is exhausted, ``stop`` is set, or it fails.

    Returns True when it stopped because ``stop`` was set.
    """
    spark = spark or session_for(project)
    running = start_model(spark, project, model, trigger=trigger, on_batch=on_batch)
    return wait_for(running, stop)
