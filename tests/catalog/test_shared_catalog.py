"""The shared catalog (a target's ``catalog: {type: hive, ...}``): a Hive metastore on the
project's own PostgreSQL. Another Spark process, set up only with the settings docs/deploy.md
gives, finds ``silver.orders`` by name while `runner stream` writes it and after; a restart of
the metastore's PostgreSQL loses no table, and the runner works after it.

One PostgreSQL and one stream serve every assertion: each JVM costs 20 s or more. Two files a
batch, a trigger a second (``fast_triggers``): two batches prove what four did (where batches
are cut does not change the table), each one a MERGE less and no 5 s trigger wait."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.processes import extra_jvm_options
from runner_devtools.metastore import PASSWORD_ENV, LocalMetastore, Settings
from tests.spark.processes import RUNNER, StreamProcess
from tests.spark.test_crash_recovery import fast_triggers
from tests.spark.test_orders_pipeline import land_sample

READER = Path(__file__).with_name("read_by_name.py")
EXPECTED = [
    ["o1", "c1", "shipped", "10.00", "2024-01-01 12:00:00"],
    ["o2", "c2", "shipped", "25.50", "2024-01-01 11:00:00"],
    ["o5", "c3", "paid", "5.00", "2024-01-01 12:30:00"],
]


@pytest.fixture(scope="module")
def metastore() -> Iterator[LocalMetastore]:
    """One PostgreSQL for the module. Not in pytest's tmp_path: that folder is private to root,
    and under root the server runs as the postgres user."""
    directory = Path(tempfile.mkdtemp(prefix="runner-metastore-"))
    server = LocalMetastore(directory)
    try:
        server.start(tied=True)
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


def shared_project(project: Path, settings: Settings) -> None:
    """The example project with a target ``shared`` whose tables live in the metastore."""
    text = (project / "project.yml").read_text()
    (project / "project.yml").write_text(
        text.replace("default_target: local", "default_target: shared")
        + "  shared:\n    master: local[2]\n"
        "    warehouse: target/shared/warehouse\n    checkpoints: target/shared/checkpoints\n"
        "    spark_conf:\n      spark.sql.shuffle.partitions: 2\n"
        f"    catalog:\n      type: hive\n      url: {settings.url}\n"
        f"      user: {settings.user}\n"
        f"      password: \"{{{{ env_var('{PASSWORD_ENV}') }}}}\"\n"
    )


def another_job_settings(settings: Settings, warehouse: Path) -> dict[str, str]:
    """What docs/deploy.md tells another job to set, with the jars from the runner's cache."""
    from runner.spark.session.jars import POSTGRESQL_JDBC, delta_coordinates, resolve_jars

    driver = resolve_jars([POSTGRESQL_JDBC])
    return {
        "spark.jars": ",".join(str(jar) for jar in resolve_jars(delta_coordinates())),
        "spark.driver.extraClassPath": os.pathsep.join(str(jar) for jar in driver),
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(warehouse),
        "spark.hadoop.javax.jdo.option.ConnectionURL": settings.url,
        "spark.hadoop.javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
        "spark.hadoop.javax.jdo.option.ConnectionUserName": settings.user,
        "spark.hadoop.javax.jdo.option.ConnectionPassword": settings.password,
        "spark.hadoop.datanucleus.schema.autoCreateTables": "true",
        "spark.hadoop.datanucleus.schema.autoCreateColumns": "true",
        "spark.hadoop.datanucleus.schema.autoCreateConstraints": "false",
        "spark.hadoop.hive.metastore.schema.verification": "false",
        # small and quiet on a busy machine (Delta reads a snapshot in 50 tasks by default);
        # a short-lived JVM's flags, as every runner JVM of the suite has ($RUNNER_JVM_OPTIONS):
        # with them its first read came 37 s after the batch it reads instead of 92 s (2 busy cores)
        "spark.driver.extraJavaOptions": extra_jvm_options(),
        "spark.databricks.delta.snapshotPartitions": "2",
        "spark.sql.shuffle.partitions": "2",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    }


class Reader:
    """read_by_name.py in its own process: ``read()`` asks it for one read and returns it."""

    def __init__(self, settings: dict[str, str], signals: Path) -> None:
        self.signals = signals
        signals.mkdir()
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, str(READER), json.dumps(settings), "silver.orders", str(signals)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            # a job as its user starts it: Spark's own execution, not the suite's small-data
            # settings (tests/conftest.py), under which Spark fails to decode listTables' rows
            env={k: v for k, v in os.environ.items() if k != "PYSPARK_SUBMIT_ARGS"},
        )
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()
        self.reads = 0

    def _follow(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def read(self, timeout: float = 600) -> dict:
        (self.signals / f"read-{self.reads}").touch()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            for line in self.lines:
                if line.startswith(f'{{"read": {self.reads},'):
                    self.reads += 1
                    return json.loads(line)
            time.sleep(0.2)
        raise AssertionError("the other job did not read:\n" + "\n".join(self.lines[-40:]))

    def stop(self) -> None:
        (self.signals / "stop").touch()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)


def runner(project: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RUNNER, *arguments, "-p", str(project)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )


def test_another_job_reads_the_target_by_name_during_and_after_a_stream_and_a_restart(
    metastore: LocalMetastore, example_project: Path, tmp_path: Path, monkeypatch
) -> None:
    settings = metastore.settings()
    assert settings is not None
    monkeypatch.setenv(PASSWORD_ENV, settings.password)
    shared_project(example_project, settings)
    warehouse = example_project / "target" / "shared" / "warehouse"
    fast_triggers(example_project, files_per_batch=2)
    land_sample(example_project, ["001.json", "002.json"])
    stream = StreamProcess(example_project, select="orders_merge", command=None)
    # the other job's JVM starts beside the stream's rather than after its batches: it reads
    # nothing (nor touches the metastore) before its first read() below
    reader = Reader(another_job_settings(settings, warehouse), tmp_path / "signals")
    try:
        done = stream.wait_for(re.compile(r"orders_merge batch 0: "), 0, 300)
        assert done is not None, "\n".join(stream.lines)

        # mid-stream: the stream is running (waiting for files) while another job reads
        first = reader.read()
        assert [row[0] for row in first["rows"]] == ["o1", "o2", "o4"]  # after two files
        assert first["location"] == f"file:{warehouse / 'silver' / 'orders'}"
        assert {"silver.orders", "_runner.event_log"} <= set(first["tables"])

        land_sample(example_project, ["003.json", "004.json"])
        done = stream.wait_for(re.compile(r"orders_merge batch 1: "), done, 300)
        assert done is not None, "\n".join(stream.lines)
        assert reader.read()["rows"] == EXPECTED
        stream.process.send_signal(signal.SIGINT)
        assert stream.process.wait(timeout=120) == 0, "\n".join(stream.lines)

        # the metastore's PostgreSQL restarts: the table is still there, by name
        metastore.stop()
        metastore.start(tied=True)
        assert reader.read()["rows"] == EXPECTED
    finally:
        if stream.process.poll() is None:
            stream.kill()
        reader.stop()

    # and the runner works after it: `runner show` finds the table in the catalog
    shown = runner(example_project, "show", "-m", "orders_merge", "--no-server")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "silver.orders (3 rows)" in shown.stdout
    # the registrations are rows in PostgreSQL: the Hive metastore's own tables
    names = metastore.query('SELECT "TBL_NAME" FROM "TBLS"', database="metastore")
    assert {"orders", "event_log"} <= set(names)
