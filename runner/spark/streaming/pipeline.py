"""Run one model's stream in this process: the task behind `runner stream` and `runner run`."""

from __future__ import annotations

import sys
import threading

from pyspark.sql import SparkSession

from runner.project import Project
from runner.spark.session.builder import build_session
from runner.spark.session.jars import pyspark_version
from runner.spark.session.local_server import server_choice
from runner.spark.sources.kafka import connector_coordinates
from runner.spark.streaming.query import (
    NO_CALLBACKS,
    Callbacks,
    RunningModel,
    start_model,
    wait_for_all,
)
from runner.specs.model import ModelSpec
from runner.specs.stream import KAFKA_FORMAT, TriggerSpec
from runner.target_address import TargetUnreachable


def session_for(
    project: Project,
    models: list[ModelSpec] | None = None,
    *,
    no_server: bool = False,
    unsupported_over_connect: str | None = None,
    stop: threading.Event | None = None,
) -> SparkSession:
    """The session for ``project``'s target, with the jars ``models`` (default: all) need.

    On a ``local[...]`` target whose local server is up (`runner server start`), a Spark
    Connect session to it, and ``project.target`` becomes that server's Connect target (same
    warehouse and checkpoints): what follows runs as on any Connect target. A line on stderr
    says which, and why not when a server exists but cannot serve this command
    (``unsupported_over_connect``, another target, changed settings). ``no_server``: in this
    process whatever runs. ``stop``: see ``build_session``."""
    jars = extra_jars_for(project, models)
    choice = server_choice(
        project.target,
        project.root,
        jars,
        no_server=no_server,
        unsupported=unsupported_over_connect,
    )
    if choice.target is not None:
        try:
            spark = build_session(choice.target, stop=stop)
        except TargetUnreachable as exc:
            print(
                f"not using the local server: {exc.message}; Spark starts in this process",
                file=sys.stderr,
            )
        else:
            print(choice.note, file=sys.stderr)
            project.target = choice.target
            return spark
    elif choice.note is not None:
        print(choice.note, file=sys.stderr)
    return build_session(
        project.target, app_name=f"runner:{project.name}", extra_jars=jars, stop=stop
    )


def extra_jars_for(project: Project, models: list[ModelSpec] | None = None) -> list[str]:
    """Maven coordinates the models' sources need beyond Delta: Spark's Kafka connector when
    one of them reads Kafka (so runs without Kafka neither download nor load it)."""
    chosen = models if models is not None else list(project.models.values())
    if any(project.stream_of(model).format == KAFKA_FORMAT for model in chosen):
        return connector_coordinates(pyspark_version())
    return []


def stream_models(
    project: Project,
    models: list[ModelSpec],
    *,
    trigger: TriggerSpec | None = None,
    callbacks: Callbacks = NO_CALLBACKS,
    stop: threading.Event | None = None,
    spark: SparkSession | None = None,
    running: list[RunningModel] | None = None,
) -> bool:
    """Stream ``models`` (given upstream first) in one Spark application.

    With an available-now trigger each model drains in turn, so a downstream model sees all its
    upstream wrote. Otherwise all queries run together until ``stop`` is set or one fails (the
    others are then stopped after their batch in flight). Returns True when ``stop`` ended it.
    Each model's query is appended to ``running`` as it starts: a caller watching progress reads
    them there (over Connect each query has its own session, so ``spark.streams`` lists none).
    """
    spark = spark or session_for(project)
    stop = stop or threading.Event()
    drain = (trigger.kind if trigger else None) == "available_now"
    running = [] if running is None else running

    def start(model: ModelSpec) -> RunningModel:
        ready = frozenset(one.model.name for one in running)  # their targets exist by now
        one = start_model(spark, project, model, trigger=trigger, callbacks=callbacks, ready=ready)
        running.append(one)
        return one

    try:
        if drain:
            for model in models:
                if stop.is_set():
                    return True
                if wait_for_all([start(model)], stop):
                    return True
            return False
        for model in models:
            start(model)
        return wait_for_all(running, stop)
    except Exception as exc:  # over Connect: the server went away under the queries
        from runner.spark.session.connect_watch import server_gone, watch_of

        gone = server_gone(watch_of(spark), project.target.name, exc)
        if gone is not None:
            raise gone from None
        raise
    finally:
        for one in running:
            one.executor.settle()
            one.release()
