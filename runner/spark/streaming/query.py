"""Start models' streaming queries and watch them: until done, stopped or one fails."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from runner.checkpoint_files import newest_offset
from runner.errors import RunnerError
from runner.last_run import model_record, write_last_run
from runner.project import Project
from runner.spark.batch.eventlog import ensure_event_log, recover_waiting_rows
from runner.spark.batch.report import BatchReport
from runner.spark.batch.run import BatchExecutor
from runner.spark.delta.statements import StatementResult
from runner.spark.delta.targets import ensure_target
from runner.spark.session.builder import release_connect_session
from runner.spark.sources.streams import read_stream, trigger_kwargs
from runner.spark.streaming.remote_batches import (
    EventLogProgress,
    RemoteBatch,
    query_session,
    remote_error,
)
from runner.spark.streaming.state_guard import record_owner
from runner.specs.model import ModelSpec
from runner.specs.stream import TriggerSpec

COMMIT_WAIT_SECONDS = 30
STOP_WAIT_SECONDS = 600  # over Connect: how long a batch in flight may take to finish
# A Connect server gives a query's new foreachBatch worker 10 s to connect back, fixed in Spark
# (PythonWorkerFactory.createSimpleWorker); a loaded server can miss them, before the query has
# started: starting it again is safe.
WORKER_LATE = "Python worker failed to connect back"
START_ATTEMPTS = 5  # a loaded 2-core machine missed three in a row


class StreamFailed(RunnerError):
    """A streaming query stopped with an error that is not a model's own error."""


@dataclass
class RunningModel:
    model: ModelSpec
    query: StreamingQuery
    executor: BatchExecutor  # runs the batches locally; over Connect a RemoteBatch does
    progress: EventLogProgress | None = None  # over Connect: batches read from the event log
    callbacks: Callbacks | None = None
    own_session: SparkSession | None = None  # over Connect: the query's own server session

    def report_progress(self, *, final: bool = False) -> None:
        """Over Connect, call the callbacks for the batches the server finished since the last
        call (the statements' source lines are not in the event log: they show as 0)."""
        if self.progress is None or self.callbacks is None:
            return
        on_batch, on_statement = self.callbacks.on_batch, self.callbacks.on_statement
        if on_batch is None and on_statement is None:
            return
        for report in self.progress.new_batches(self.query, final=final):
            for result in report.statements:
                if on_statement is not None:
                    on_statement(report.model, report.batch_id, result)
            if on_batch is not None:
                on_batch(report)

    def request_stop(self) -> None:
        """Stop after the batch in flight: a batch that would start later does no work (it is
        replayed on the next start), and the one running now finishes first."""
        self.executor.stop_requested.set()
        if self.progress is not None:
            self._wait_for_trigger_end()
            self.query.stop()
            return
        self.executor.idle.wait()
        # foreachBatch has returned; Spark still has to write the batch to the checkpoint's
        # commit log. It reports the batch's progress only after that: wait for it, so the
        # batch is not replayed (harmlessly, but needlessly) on the next start.
        finished = self.executor.last_batch_id
        deadline = time.monotonic() + COMMIT_WAIT_SECONDS
        while finished is not None and self.query.isActive and time.monotonic() < deadline:
            progress = self.query.lastProgress
            if progress is not None and progress["batchId"] >= finished:
                break
            time.sleep(0.05)
        self.query.stop()

    def _wait_for_trigger_end(self) -> None:
        """Over Connect the batch runs on the server, out of reach of ``stop_requested``: wait
        until the query is between triggers (its batch finished and committed). A trigger that
        begins in the moment before ``stop()`` is cancelled and replayed on the next start,
        which the batch's idempotent writes make harmless."""
        deadline = time.monotonic() + STOP_WAIT_SECONDS
        while self.query.isActive and time.monotonic() < deadline:
            if not self.query.status["isTriggerActive"]:
                return
            time.sleep(0.2)

    def error(self) -> RunnerError | None:
        """Why the query failed, if it did: the model's own error when there is one."""
        if self.executor.failure is not None:
            return self.executor.failure
        if self.executor.stop_requested.is_set():
            return None
        failure = self.query.exception()
        if failure is None:
            return None
        text = str(failure).strip()
        error = remote_error(text)  # over Connect: the model's error, raised on the server
        if error is not None:
            return error
        return StreamFailed(
            f"the stream of model '{self.model.name}' failed: {failure_summary(text)}",
            file=self.model.file,
        )

    def release(self) -> None:
        """Release the query's own server session (over Connect) once the query has ended, or
        the server has gone (asking it whether the query is active would raise again, in place
        of the error that says the server went away)."""
        if self.own_session is None:
            return
        from runner.spark.session.connect_watch import watch_of

        watch = watch_of(self.own_session)
        if (watch is not None and (watch.outage or watch.gave_up)) or not self.query.isActive:
            release_connect_session(self.own_session)
            self.own_session = None


def failure_summary(text: str) -> str:
    """One line saying why a query failed. For an error inside a foreachBatch Python worker
    (Spark Connect), Spark's first line ends in "Traceback (most recent call last):": the line
    wanted is the exception's, the first unindented line after the traceback's last frame."""
    lines = text.splitlines()
    if not lines:
        return "(no message)"
    frames = [i for i, line in enumerate(lines) if line.startswith("  File ")]
    if not frames:
        return lines[0]
    after = (line for line in lines[frames[-1] + 1 :] if line and not line[0].isspace())
    return next(after, lines[0])


@dataclass(frozen=True)
class Callbacks:
    """Progress hooks, called from the streaming thread of each query."""

    on_batch: Callable[[BatchReport], None] | None = None
    on_statement: Callable[[str, int, StatementResult], None] | None = None


NO_CALLBACKS = Callbacks()


def start_model(
    spark: SparkSession,
    project: Project,
    model: ModelSpec,
    *,
    trigger: TriggerSpec | None = None,
    callbacks: Callbacks = NO_CALLBACKS,
    ready: frozenset[str] = frozenset(),
) -> RunningModel:
    """Create or attach the target, then start the model's query with its checkpoint.
    ``ready``: models whose targets this session has already made exist (started before)."""
    ensure_event_log(spark, project.target)
    # rows a killed run of the model left waiting, before this run's batches write theirs
    recovered = recover_waiting_rows(spark, project.target, model.name)
    if recovered:
        print(
            f"{model.name}: appended {recovered} event-log row(s) an earlier run left waiting",
            file=sys.stderr,
        )
    ensure_target(spark, project, model)
    record_owner(spark, project, model)  # at a first start: which target this checkpoint feeds
    stream = project.stream_of(model)
    ref_location = None
    if stream.ref:  # the upstream target must exist before its changes can be read
        upstream = project.models[stream.ref]
        if upstream.name not in ready:
            ensure_target(spark, project, upstream)
        ref_location = project.target.table_location(upstream.target_table)
    checkpoint = project.target.checkpoint_for(model.name)
    # the newest batch Spark can replay (BatchExecutor): this process holds the model's lock,
    # so no other run writes the checkpoint meanwhile, except over Connect
    replay_bound = None
    if project.target.kind != "connect":
        newest = newest_offset(checkpoint)
        replay_bound = -1 if newest is None else newest
    executor = BatchExecutor(
        project,
        model,
        checkpoint,
        callbacks.on_batch,
        callbacks.on_statement,
        replay_bound,
        # over Connect it runs no batch
        warm_state=project.target.kind != "connect",
        group_event_log=project.target.kind != "connect",
    )
    if executor.warmer is not None:
        # the state of the target's version the first MERGE starts from, while the query starts
        executor.warmer.warm(spark, project.target.table_location(model.target_table))
    function: Callable[[DataFrame, int], None] = executor
    progress = None
    if project.target.kind == "connect":
        function = RemoteBatch(
            project.root, project.target.name, project.vars, model.name, checkpoint
        )
        progress = EventLogProgress(spark, project.target, model.name)
    session = query_session(spark, project.target)
    record = model_record(project, model)  # computed first: a failure here starts no query
    try:
        writer = (
            read_stream(session, stream, ref_location)
            .writeStream.queryName(model.name)
            .option("checkpointLocation", str(checkpoint))
            .foreachBatch(function)
            .trigger(**trigger_kwargs(trigger or stream.trigger, stream))
        )
        query = start_query(writer.start, model.name)
    except BaseException:
        # a query's own session left to the garbage collector at exit hangs in gRPC's close
        if session is not spark:
            release_connect_session(session)
        raise
    # what this start runs, for `runner plan`: only once Spark has accepted the query
    write_last_run(checkpoint, record)
    own = session if session is not spark else None
    return RunningModel(model, query, executor, progress, callbacks, own)


def start_query(start: Callable[[], StreamingQuery], name: str) -> StreamingQuery:
    """``start()``, again (START_ATTEMPTS in all) while the server says the query's Python
    worker did not connect back in time, each time saying so in a line on stderr."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return start()
        except Exception as exc:
            if WORKER_LATE not in str(exc):
                raise
            if attempt == START_ATTEMPTS:
                raise StreamFailed(
                    f"{name}: the server's Python worker for this query did not connect back "
                    f"within Spark's 10 s, {START_ATTEMPTS} times: the Connect server is too "
                    "busy to start the query; nothing of it ran",
                    hint="start the stream again once the server is less loaded (its "
                    "checkpoint is where it was)",
                ) from None
            print(
                f"{name}: the server's Python worker for this query did not connect back within "
                f"Spark's 10 s (a loaded server); starting it again "
                f"({attempt + 1}/{START_ATTEMPTS})",
                file=sys.stderr,
            )
    raise AssertionError("unreachable")  # the loop returns or raises


def wait_for_all(running: list[RunningModel], stop: threading.Event | None = None) -> bool:
    """Block until every query has ended. Returns True when they ended because ``stop`` was set.

    When one query fails, the others are stopped (each after its batch in flight) and the
    failure is raised: the model's own error (file, line, statement) when there is one.
    """
    stop = stop or threading.Event()
    while True:
        # one look at each query per turn (over Connect every look is a call to the server);
        # a query may end right after it, which the next turn sees
        active = [r for r in running if r.query.isActive]
        if not active:
            break
        if stop.is_set():
            for r in running:
                r.request_stop()
            break
        failed = next((r for r in running if r not in active and r.error()), None)
        if failed is not None:
            for r in active:
                r.request_stop()
            break
        for r in running:
            r.report_progress()
            r.executor.flush_event_log()
        # a failure is noticed on the next turn and reported from the executor's typed error
        with contextlib.suppress(StreamingQueryException):
            active[0].query.awaitTermination(0.5)  # type: ignore[arg-type]  # seconds; a float works
    for r in running:
        r.report_progress(final=True)
    for r in running:
        error = r.error()
        if error is not None:
            raise error
    return stop.is_set()
