"""The live table of `runner stream`, without Spark: rows from batch reports, lag from a
file source's checkpoint log, plain output when stdout is not a terminal."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

from rich.console import Console

from runner.cli.live import LiveBoard, live_view, unread_files, versions_behind
from runner.project import load
from runner.terminal import plain_console


def report(model: str, batch_id: int, rows: int, seconds: float, **counts: int) -> object:
    return SimpleNamespace(
        model=model,
        batch_id=batch_id,
        input_rows=rows,
        seconds=seconds,
        quarantined=0,
        merge_counts={f"num_{k}_rows": v for k, v in counts.items()},
    )


def rendered(board: LiveBoard) -> str:
    """The board as `runner stream` draws it, on the CLI's console (runner.cli.progress)."""
    out = plain_console(file=io.StringIO(), width=200, force_terminal=False)
    out.print(board.table())
    return out.file.getvalue()  # type: ignore[attr-defined]


def test_board_shows_last_batch_rate_lag_and_error(example_project: Path) -> None:
    project = load(example_project)
    models = [project.models["orders_merge"], project.models["customer_totals"]]
    board = LiveBoard(project, models)
    board.on_batch(report("orders_merge", 0, 5, 2.0, inserted=3, updated=0, deleted=0))
    board.on_batch(report("orders_merge", 1, 3, 0.5, inserted=1, updated=1, deleted=1))
    kafka_progress = {"sources": [{"metrics": {"maxOffsetsBehindLatest": "12"}}]}
    board.poll([("orders_merge", None, True), ("customer_totals", kafka_progress, True)])
    board.record_error("customer_totals", "models/customer_totals.sql:20: s.items[idx]\ndetail")
    text = rendered(board)
    orders = next(line for line in text.splitlines() if "orders_merge" in line)
    assert [cell.strip() for cell in orders.split("│")[1:-1]] == [
        "orders_merge", "orders", "running", "2", "1", "3", "+1 ~1 -1", "0.50", "6.00",
        "0 files", "",
    ]  # fmt: skip
    totals = next(line for line in text.splitlines() if "customer_totals" in line)
    assert "failed" in totals and "12 offsets" in totals
    assert "models/customer_totals.sql:20: s.items[idx]" in totals and "detail" not in totals


def test_unread_files_compares_the_folder_with_the_source_log(tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    for name in ("001.json", "002 x.json", "003.json", "_SUCCESS", ".hidden"):
        (landing / name).write_text("{}\n")
    checkpoint = tmp_path / "checkpoint"
    assert unread_files(landing, checkpoint) == 3  # no log yet: nothing read
    log = checkpoint / "sources" / "0"
    log.mkdir(parents=True)
    uri = (landing / "002 x.json").resolve().as_uri()  # Spark writes file:/// URIs, escaped
    (log / "0").write_text(
        f'v1\n{{"path":"{(landing / "001.json").resolve().as_uri()}","batchId":0}}\n'
        f'{{"path":"{uri}","batchId":0}}\n'
    )
    assert unread_files(landing, checkpoint) == 1
    assert unread_files(tmp_path / "missing", checkpoint) == 0


def test_no_live_table_when_stdout_is_not_a_terminal(example_project: Path) -> None:
    project = load(example_project)
    board = LiveBoard(project, [project.models["orders_merge"]])
    piped = Console(file=io.StringIO(), force_terminal=False)
    with live_view(piped, board, lambda: []) as shown:
        assert shown is False
    assert piped.file.getvalue() == ""  # type: ignore[attr-defined]


def test_versions_behind_reads_the_delta_log_and_the_end_offset(tmp_path: Path) -> None:
    log = tmp_path / "_delta_log"
    log.mkdir()
    for version in range(6):  # versions 0..5
        (log / f"{version:020d}.json").write_text("{}\n")
    (log / "00000000000000000005.checkpoint.parquet").write_text("")

    def progress(version: int, index: int) -> dict:
        offset = {"reservoirVersion": version, "index": index, "isStartingVersion": False}
        return {"sources": [{"endOffset": json.dumps(offset)}]}

    assert versions_behind(tmp_path, progress(6, -1)) == 0  # next batch starts at 6: caught up
    assert versions_behind(tmp_path, progress(4, -1)) == 2  # 4 and 5 unread
    assert versions_behind(tmp_path, progress(4, 3)) == 1  # part of 4 read
    assert versions_behind(tmp_path, {"sources": [{"endOffset": None}]}) is None
