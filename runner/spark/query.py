"""Start a model's streaming query and wait for it: until done, stopped or failed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from runner.config import ModelSpec, TriggerSpec
from runner.errors import RunnerError
from runner.project import Project
from runner.spark.batch import BatchExecutor, BatchReport
from runner.spark.sources import read_stream, trigger_kwargs
from runner.spark.targets import ensure_target


class StreamFailed(RunnerError):
    """A streaming query stopped with an error that is not a model's own error."""


@dataclass
class RunningModel:
    model: ModelSpec
    query: StreamingQuery
    executor: BatchExecutor


def start_model(
    spark: SparkSession,
    project: Project,
    model: ModelSpec,
    *,
    trigger: TriggerSpec | None = None,
    on_batch: Callable[[BatchReport], None] | None = None,
) -> RunningModel:
    """Create or attach the target, then start the model's query with its checkpoint."""
    ensure_target(spark, project, model)
    stream = project.stream_of(model)
    checkpoint = project.target.checkpoint_for(model.name)
    executor = BatchExecutor(project, model, checkpoint, on_batch)
    query = (
        read_stream(spark, stream)
        .writeStream.queryName(model.name)
        .option("checkpointLocation", str(checkpoint))
        .foreachBatch(executor)
        .trigger(**trigger_kwargs(trigger or stream.trigger, stream))
        .start()
    )
    return RunningModel(model, query, executor)


def wait_for(running: RunningModel, stop: threading.Event | None = None) -> bool:
    """Block until the query ends. Returns True when it ended because ``stop`` was set.

    A stop lets the batch in flight finish; a batch that would start after it does no work and
    is replayed on the next start. A failed query raises the model's own error (file, line,
    statement) when there is one.
    """
    stop = stop or threading.Event()
    query, executor = running.query, running.executor
    while query.isActive:
        if stop.is_set():
            executor.stop_requested.set()
            executor.idle.wait()
            query.stop()
            break
        try:
            query.awaitTermination(0.5)
        except StreamingQueryException:
            break  # reported below, from the executor's typed error when there is one
    if executor.failure is not None:
        raise executor.failure
    error = query.exception()
    if error is not None and not stop.is_set():
        message = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        raise StreamFailed(
            f"the stream of model '{running.model.name}' failed: {message}",
            file=running.model.file,
        )
    return stop.is_set()
