"""`runner stream` in a terminal, as an operator runs it, and Ctrl-C: a live table per model,
redrawn in place; the batch in flight when Ctrl-C comes finishes, every statement of it, the
process exits 0, and the next start carries on from there. The command runs under a
pseudo-terminal; piped (CI logs) it prints plain lines, which the crash tests read. One
process for both: each `runner stream` costs a JVM start and its first batches."""

from __future__ import annotations

import os
import pty
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

from pyspark.sql import SparkSession

from runner import project as project_loader
from runner import storage
from runner.spark.batch.eventlog import event_log_location
from tests.spark.processes import RUNNER
from tests.spark.test_orders_pipeline import EXPECTED_ORDERS, land_sample

SCREEN = Path(__file__).resolve().parents[2] / "target" / "screenshots" / "live-view.txt"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_stream_in_a_terminal_shows_a_live_table_and_ctrl_c_stops_after_the_batch_in_flight(
    spark: SparkSession, example_project: Path, cli
) -> None:
    land_sample(example_project, ["001.json", "002.json", "003.json", "004.json"])
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [RUNNER, "stream", "--select", "orders_merge+", "--verbose", "-p", str(example_project)],
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

    # orders_merge's first batch in the table (the first file: 5 rows in, 3 inserted), and its
    # second batch begun: --verbose prints each statement above the table
    first_batch = re.compile(r"│ orders_merge +│ orders +│ running +│ +1 │ +0 │ +5 │ +\+3 ~0 -0 │")
    in_flight = re.compile(r"orders_merge batch 1 batch\[0\] CREATE")
    totals_row = re.compile(r"│ customer_totals +│ order_changes +│ (starting|running) +│")
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if in_flight.search(screen()):
                break
            time.sleep(0.05)
        # as Ctrl-C does, while batch 1's MERGE is still to run; the JVM ignores SIGINT
        process.send_signal(signal.SIGINT)
        text = screen()
        assert in_flight.search(text) and first_batch.search(text), text[-6000:]
        assert totals_row.search(text), text[-3000:]
        assert "runner stream (Ctrl-C stops after the batch in flight)" in text
        header = re.search(r"model .*source .*status .*rows in .*rows/s .*lag .*last error", text)
        assert header, text[-3000:]
        # the table is redrawn in place, not printed once per batch as plain lines
        assert "orders_merge batch 0: 5 rows in" not in text
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
    assert "SIGINT: stopping after the batch in flight..." in final
    assert final.rstrip().endswith("stopped cleanly."), final[-3000:]
    assert re.search(r"│ orders_merge +│ orders +│ stopped +│", final), final[-3000:]
    # a stop that went as it should is not reported as an error by Spark's log either (the
    # interrupted trigger of a query between batches once printed one)
    assert not re.search(r"\d\d:\d\d:\d\d ERROR ", final), final[-3000:]

    # batch 1 was running when the signal came: it finished, every statement of it, and no
    # batch after it began; nothing ran without being committed
    target = project_loader.load(example_project).target
    log = spark.read.format("delta").load(str(event_log_location(target)))
    finished = {
        r["batch_id"]: (r["inserted"], r["updated"], r["deleted"])
        for r in log.where("model = 'orders_merge'").collect()
    }
    assert sorted(finished) == [0, 1] and finished[1] == (1, 1, 1), finished
    commits = storage.names_in(target.checkpoint_for("orders_merge") / "commits")
    committed = sorted(int(name) for name in commits if name.isdigit())
    assert committed == [0, 1]

    drained = cli("run", "-m", "orders_merge", "-p", example_project)  # in-process: no new JVM
    assert drained.exit_code == 0, drained.output
    assert "orders_merge batch 2:" in drained.output  # it carried on from where it stopped
    orders = spark.read.format("delta").load(str(target.table_location("silver.orders")))
    assert [tuple(r) for r in orders.orderBy("order_id").collect()] == EXPECTED_ORDERS
