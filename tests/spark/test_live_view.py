"""`runner stream` in a terminal: a live table per model, redrawn in place. The command runs
under a pseudo-terminal, as in an operator's shell; piped (CI logs) it prints plain lines,
which test_graceful_stop.py and the crash tests read."""

from __future__ import annotations

import os
import pty
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

from tests.spark.processes import RUNNER
from tests.spark.test_orders_pipeline import land_sample

SCREEN = Path(__file__).resolve().parents[2] / "target" / "screenshots" / "live-view.txt"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_stream_in_a_terminal_shows_a_live_table_per_model(example_project: Path) -> None:
    land_sample(example_project, ["001.json", "002.json", "003.json", "004.json"])
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [RUNNER, "stream", "--select", "orders_merge+", "-p", str(example_project)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "160", "LINES": "40"},
    )
    os.close(slave)
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # the terminal closed: the process exited
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def screen() -> str:
        return ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))

    # orders_merge's first batch: the first file, 5 rows in, 3 inserted; files still to read.
    # One batch is enough to prove the table (the machine may be slow: no more is awaited).
    orders_row = re.compile(
        r"│ orders_merge +│ orders +│ running +│ +[1-4] │ +\d │ +\d │ +\+\d ~\d -\d │ +[\d.]+ │"
        r" +[\d.]+ │ +[0-3] files? │"
    )
    first_batch = re.compile(r"│ orders_merge +│ orders +│ running +│ +1 │ +0 │ +5 │ +\+3 ~0 -0 │")
    totals_row = re.compile(r"│ customer_totals +│ order_changes +│ (starting|running) +│")
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if orders_row.search(screen()):
                break
            time.sleep(0.2)
        text = screen()
        assert orders_row.search(text) and first_batch.search(text), text[-6000:]
        assert totals_row.search(text), text[-3000:]
        assert "runner stream (Ctrl-C stops after the batch in flight)" in text
        header = re.search(r"model .*source .*status .*rows in .*rows/s .*lag .*last error", text)
        assert header, text[-3000:]
        # the table is redrawn in place, not printed once per batch as plain lines
        assert "orders_merge batch 0: 5 rows in" not in text
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=120) == 0, screen()[-3000:]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        reader.join(timeout=10)
        os.close(master)
    final = screen()
    SCREEN.parent.mkdir(parents=True, exist_ok=True)
    SCREEN.write_text(final, encoding="utf-8")  # what the terminal showed, for CI to keep
    assert "stopped cleanly." in final
    assert re.search(r"│ orders_merge +│ orders +│ stopped +│", final), final[-3000:]
