"""The live view of `runner stream`: one row per model, redrawn in place in a terminal.

Each row shows the model's last batch (id, rows in, MERGE counts, seconds), its rate (rows per
second of that batch), its lag (files not yet read, or Kafka offsets behind the latest) and its
last error. When stdout is not a terminal (CI logs, a pipe) nothing is redrawn: each batch is one
plain line, as ``runner.cli.progress.print_batch`` prints it.

Pure Python: the progress of the running queries it polls comes in from the caller.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from runner.error_text import first_line
from runner.project import Project
from runner.source_retention import FILE_SOURCE_LOG, delta_log_versions, files_read
from runner.specs.model import ModelSpec
from runner.specs.stream import FILE_FORMATS
from runner.storage import Location

if TYPE_CHECKING:
    from runner.spark.batch.report import BatchReport

REFRESH_SECONDS = 0.5


@dataclass
class ModelRow:
    model: str
    source: str
    batches: int = 0
    last_batch: int | None = None
    rows_in: int = 0
    merged: str = ""
    seconds: float = 0.0
    lag: str = "?"
    status: str = "starting"
    error: str = ""

    @property
    def rate(self) -> str:
        if self.last_batch is None or self.seconds <= 0:
            return ""
        rate = self.rows_in / self.seconds
        return f"{rate:.2f}" if rate < 10 else f"{rate:,.0f}"


class LiveBoard:
    """What the table shows, updated from the streaming threads and a polling thread."""

    def __init__(self, project: Project, models: list[ModelSpec]) -> None:
        self.project = project
        self.models = {m.name: m for m in models}
        self.rows = {m.name: ModelRow(m.name, m.config.stream or "") for m in models}
        self.note = ""  # a problem of the view itself (polling), shown under the table
        self._lock = threading.Lock()

    def on_batch(self, report: BatchReport) -> None:
        counts = report.merge_counts
        with self._lock:
            row = self.rows[report.model]
            row.batches += 1
            row.last_batch = report.batch_id
            row.rows_in = report.input_rows
            row.seconds = report.seconds
            row.status = "running"
            row.merged = (
                f"+{counts.get('num_inserted_rows', 0)} ~{counts.get('num_updated_rows', 0)} "
                f"-{counts.get('num_deleted_rows', 0)}"
                if counts
                else ""
            )
            if report.quarantined:
                row.merged += f" q{report.quarantined}"

    def record_error(self, model: str | None, message: str) -> None:
        with self._lock:
            for row in self.rows.values():
                if model is None or row.model == model:
                    row.error = first_line(message)
                    row.status = "failed"

    def finish(self) -> None:
        with self._lock:
            for row in self.rows.values():
                if row.status != "failed":
                    row.status = "stopped"

    def poll(self, queries: list[tuple[str, dict[str, Any] | None, bool]]) -> None:
        """Update status and lag from ``(query name, lastProgress, isActive)`` of each query."""
        for name, progress, active in queries:
            if name not in self.rows:
                continue
            lag = self._lag(self.models[name], progress)
            with self._lock:
                row = self.rows[name]
                if lag is not None:
                    row.lag = lag
                if row.status != "failed":
                    row.status = "running" if active else "stopped"

    def _lag(self, model: ModelSpec, progress: dict[str, Any] | None) -> str | None:
        for source in (progress or {}).get("sources") or []:
            metrics = source.get("metrics") or {}
            if "maxOffsetsBehindLatest" in metrics:  # Kafka
                return _count(int(float(metrics["maxOffsetsBehindLatest"])), "offset")
            if "numFilesOutstanding" in metrics:  # Delta, when it reports it
                return _count(int(float(metrics["numFilesOutstanding"])), "file")
        stream = self.project.stream_of(model)
        if stream.format in FILE_FORMATS and stream.path is not None:
            checkpoint = self.project.target.checkpoint_for(model.name)
            return _count(unread_files(stream.path, checkpoint), "file")
        if stream.ref and stream.ref in self.project.models and progress:
            upstream = self.project.models[stream.ref].target_table
            table = self.project.target.table_location(upstream)
            behind = versions_behind(table, progress)
            return None if behind is None else _count(behind, "version")
        return None

    def table(self) -> Table:
        table = Table(
            title="runner stream (Ctrl-C stops after the batch in flight)",
            caption=self.note or None,
        )
        for column in ("model", "source", "status", "batches", "last batch", "rows in"):
            table.add_column(column, justify="left" if column in ("model", "source") else "right")
        for column in ("+ins ~upd -del", "secs", "rows/s", "lag"):
            table.add_column(column, justify="right", no_wrap=True)
        table.add_column("last error", overflow="fold", style="red")
        with self._lock:
            for row in self.rows.values():
                table.add_row(
                    row.model,
                    row.source,
                    row.status,
                    str(row.batches),
                    "" if row.last_batch is None else str(row.last_batch),
                    "" if row.last_batch is None else str(row.rows_in),
                    row.merged,
                    "" if row.last_batch is None else f"{row.seconds:.2f}",
                    row.rate,
                    row.lag,
                    row.error,
                )
        return table


def unread_files(source: Path, checkpoint: Location) -> int:
    """Data files under ``source`` that the query's file-source log does not list yet."""
    if not source.is_dir():
        return 0
    present = {
        str(p.resolve())
        for p in source.rglob("*")
        if p.is_file() and not p.name.startswith((".", "_"))
    }
    return len(present - files_read(checkpoint / FILE_SOURCE_LOG))


def versions_behind(table: Location, progress: dict[str, Any]) -> int | None:
    """Table versions a Delta source has not read: the newest version in the table's
    ``_delta_log`` against the ``reservoirVersion`` of the query's end offset (where the
    next batch starts; ``index`` -1 means none of that version is read yet)."""
    for source in progress.get("sources") or []:
        offset = source.get("endOffset")
        if isinstance(offset, str):
            try:
                offset = json.loads(offset)
            except ValueError:
                continue
        if not isinstance(offset, dict) or "reservoirVersion" not in offset:
            continue
        versions = delta_log_versions(table)
        if not versions:
            return None
        next_version = int(offset["reservoirVersion"])
        if int(offset.get("index", -1)) != -1:
            next_version += 1  # part of that version is read; count it as read
        return max(0, max(versions) - next_version + 1)
    return None


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


@contextmanager
def live_view(
    console: Console,
    board: LiveBoard,
    queries: Callable[[], list[tuple[str, dict[str, Any] | None, bool]]],
) -> Iterator[bool]:
    """Redraw ``board`` in place while the block runs, when ``console`` is a terminal.

    Yields whether the table is shown (when not, the caller prints a line per batch)."""
    if not console.is_terminal:
        yield False
        return
    done = threading.Event()
    with Live(board.table(), console=console, auto_refresh=False, transient=False) as live:

        def refresh() -> None:
            while not done.wait(REFRESH_SECONDS):
                try:
                    board.poll(queries())
                except Exception as exc:  # e.g. a query stopping: shown, retried next time
                    board.note = f"live view: could not read progress: {exc}"
                else:
                    board.note = ""
                live.update(board.table(), refresh=True)

        poller = threading.Thread(target=refresh, name="runner-live-view", daemon=True)
        poller.start()
        try:
            yield True
        finally:
            done.set()
            poller.join(timeout=5)
            live.update(board.table(), refresh=True)
