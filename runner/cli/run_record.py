"""What `runner run` and `runner build` ran, model by model, for target/run_results.json and
JUnit XML: the micro-batches of each model as they finish, and the model that failed."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from runner.run_results import (
    ModelTally,
    NodeResult,
    Status,
    junit_cases,
    now_utc,
    write_command_results,
)

if TYPE_CHECKING:
    from runner.project import Project
    from runner.spark.batch.report import BatchReport


class RunRecord:
    """The models of one run, in the order they run (upstream first)."""

    def __init__(self, models: list[str], started_at: datetime | None = None) -> None:
        self.models = models
        self.started_at = started_at or now_utc()
        self.tallies = {name: ModelTally() for name in models}
        self.began: dict[str, datetime] = {}
        self.ended: dict[str, datetime] = {}
        self.failure: tuple[str | None, str] | None = None  # (model or None: unknown, message)
        self.extra: list[NodeResult] = []  # seeds and tests, for `build`

    def start(self, model: str) -> None:
        """``model`` starts now (`build` runs one model at a time and says so)."""
        self.began[model] = now_utc()

    def finish(self, model: str) -> None:
        self.ended[model] = now_utc()

    def on_batch(self, report: BatchReport) -> None:
        """Called from the streaming thread after each micro-batch."""
        now = now_utc()
        self.tallies[report.model].add(report.input_rows, report.merge_counts)
        self.began.setdefault(report.model, now - timedelta(seconds=report.seconds))
        self.ended[report.model] = now

    def recording(self, then: Callable[[BatchReport], None]) -> Callable[[BatchReport], None]:
        """``then`` (the progress output), after recording each batch."""

        def on_batch(report: BatchReport) -> None:
            self.on_batch(report)
            then(report)

        return on_batch

    def fail(self, model: str | None, message: str) -> None:
        self.failure = (model, message)

    def model_result(self, name: str, status: Status, message: str = "") -> NodeResult:
        """One model's result (`build` runs models one at a time)."""
        tally = self.tallies[name]
        began = self.began.get(name, self.started_at)
        ended = self.ended.get(name, now_utc())
        text = message or tally.message()
        return NodeResult("model", name, status, began, ended, text, None, tally.adapter_response())

    def model_results(self) -> list[NodeResult]:
        """One result per model: ``success`` up to the one that failed (``error``), then
        ``skipped``; every model is an ``error`` when the failure names none."""
        results = []
        failed_model, message = self.failure or (None, "")
        after_failure = False
        previous_end = self.started_at
        for name in self.models:
            tally = self.tallies[name]
            began = self.began.get(name, previous_end)
            ended = self.ended.get(name, began)
            status: Status
            if self.failure is not None and (failed_model is None or name == failed_model):
                status, text = "error", message
                ended = max(ended, now_utc()) if name == failed_model else ended
            elif after_failure:
                status, text = "skipped", f"skipped: {failed_model} failed before it ran"
            else:
                status, text = "success", tally.message()
            after_failure = after_failure or name == failed_model
            results.append(
                NodeResult(
                    "model", name, status, began, ended, text, None, tally.adapter_response()
                )
            )
            previous_end = ended
        return results

    def write(
        self,
        project: Project,
        command: str,
        *,
        select: list[str] | None,
        exclude: list[str] | None,
        junit_xml: Path | None,
        results: list[NodeResult] | None = None,
    ) -> list[Path]:
        """Write target/run_results.json (and JUnit XML when asked); returns the files."""
        from runner.junit import write_junit

        nodes = self.model_results() if results is None else results
        written = [
            write_command_results(
                project.root,
                project.name,
                command,
                nodes,
                self.started_at,
                target=project.target.name,
                select=select,
                exclude=exclude,
            )
        ]
        if junit_xml is not None:
            write_junit(junit_cases(nodes), junit_xml, suite=f"runner {command} {project.name}")
            written.append(junit_xml)
        return written
