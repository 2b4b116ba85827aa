"""Fixtures shared by every test folder. Nothing here imports pyspark until a test asks for
``spark``."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from runner.spark.session.small_data import SMALL_DATA_CONF, submit_args
from runner_devtools.example_project import copy_example
from runner_devtools.jvm_archive import SHORT_LIVED_JVM_OPTIONS
from runner_devtools.jvm_archive import jvm_options as class_archive_options

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from typer.testing import Result

REPO = Path(__file__).resolve().parents[1]

# Every JVM the tests start through the runner gets the short-lived flags, and a `runner`
# process's driver the classes of the CDS archive when scripts/test.sh made it
# (runner_devtools/jvm_archive.py says why). The suite's own session (the `spark` fixture) runs
# for the whole suite and keeps the full JIT.
SUITE_JVM_OPTIONS = "-XX:+UseSerialGC"
os.environ.setdefault(
    "RUNNER_JVM_OPTIONS", f"{SHORT_LIVED_JVM_OPTIONS} {class_archive_options()}".strip()
)

# Compiled templates (runner/templating/code_cache.py) are kept for this run of the suite only:
# its projects live in temporary directories, so their entries would never be read again.
if "RUNNER_TEMPLATE_CACHE" not in os.environ:
    _TEMPLATE_CACHE = tempfile.mkdtemp(prefix="runner-template-cache-")
    os.environ["RUNNER_TEMPLATE_CACHE"] = _TEMPLATE_CACHE
    atexit.register(shutil.rmtree, _TEMPLATE_CACHE, ignore_errors=True)

# `runner lint`'s result cache (runner/lint/result_cache.py) is off for the suite: a test that
# changes a rule in-process (monkeypatch) must not be answered with an earlier run's findings.
# tests/unit/test_lint_cache.py turns it on.
os.environ["RUNNER_LINT_CACHE"] = ""

ORDERS_SCHEMA = (
    "order_id STRING, customer_id STRING, status STRING, amount DECIMAL(10,2), "
    "updated_at TIMESTAMP, op STRING"
)


def write_project(
    root: Path,
    models: dict[str, str],
    *,
    streams: str | None = None,
    project_vars: str = "",
    macros: dict[str, str] | None = None,
) -> Path:
    """A small project in ``root``: project.yml, an ``orders`` JSON stream, the given models."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "project.yml").write_text(
        "name: test_project\n"
        f"vars:\n  delete_op: D\n{project_vars}"
        "targets:\n  local:\n    master: local[2]\n"
        "    warehouse: target/warehouse\n    checkpoints: target/checkpoints\n"
        "    spark_conf:\n      spark.sql.shuffle.partitions: 2\n"
    )
    (root / "streams").mkdir(exist_ok=True)
    (root / "streams" / "orders.yml").write_text(
        streams
        or (
            "streams:\n  orders:\n    format: json\n    path: landing/orders\n"
            f'    schema: "{ORDERS_SCHEMA}"\n'
            "    options:\n      maxFilesPerTrigger: 1\n"
        )
    )
    (root / "models").mkdir(exist_ok=True)
    for name, sql in models.items():
        (root / "models" / f"{name}.sql").write_text(sql)
    (root / "macros").mkdir(exist_ok=True)
    for name, sql in (macros or {}).items():
        (root / "macros" / f"{name}.sql").write_text(sql)
    return root


def land_events(landing: Path, name: str, lines: list[str]) -> Path:
    """Write one JSON-lines file into ``landing`` with an mtime later than any before it."""
    landing.mkdir(parents=True, exist_ok=True)
    newest = max((p.stat().st_mtime for p in landing.iterdir()), default=time.time() - 3600)
    path = landing / name
    path.write_text("\n".join(lines) + "\n")
    os.utime(path, (newest + 1, newest + 1))
    return path


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        help="the thorough profile: many more hypothesis examples per property, more "
        "SIGKILLs in the crash tests, and Spark's default execution (generated code, adaptive "
        "re-planning) instead of the small-data settings (minutes more); CI runs the default "
        "profile, run this one before a release or after touching a macro or the batch path",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Choose the hypothesis profile before test modules (and their @settings) are imported."""
    from hypothesis import settings

    # 4 by default: the MERGE properties run 2 examples each (tests/spark/test_merge_properties.py
    # halves the profile's count), the expectation oracle its floor of 3
    settings.register_profile("default", max_examples=4)
    settings.register_profile("slow", max_examples=60)
    settings.load_profile("slow" if config.getoption("--slow") else "default")
    # Every Spark the suite starts (its own session, each `runner` process) runs a few rows as
    # `runner test` does: interpreted, not compiled to Java for each new plan, and without
    # adaptive re-planning (runner/spark/session/small_data.py says why): a fifth less CPU in
    # the Spark tests. The thorough profile keeps Spark's defaults, generated code included.
    if not config.getoption("--slow"):
        os.environ.setdefault("PYSPARK_SUBMIT_ARGS", submit_args(SMALL_DATA_CONF))


@pytest.fixture
def kill_count(request: pytest.FixtureRequest) -> int:
    """How many times a crash test SIGKILLs `runner stream`: its module's ``KILLS``, or its
    ``SLOW_KILLS`` in the thorough profile (``--slow``)."""
    name = "SLOW_KILLS" if request.config.getoption("--slow") else "KILLS"
    return int(getattr(request.module, name))


@pytest.fixture(autouse=True)
def no_stream_left_running() -> Iterator[None]:
    """A `runner stream` a test started and left running (it failed before stopping it) is
    killed with its JVM when the test ends: nothing outlives its test (it once ran for 42
    minutes, adopted by init, after a failed cluster test)."""
    yield
    from tests.spark.processes import StreamProcess

    StreamProcess.kill_leftovers()


@pytest.fixture
def example_project(tmp_path: Path) -> Path:
    """A copy of the repository's example project (models, streams, macros, sample data)."""
    return copy_example(tmp_path / "example")


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """The suite's one SparkSession: real Spark, real Delta, small and quiet. Only tests that ask
    for it start a JVM (pyspark is imported here, lazily, for the same reason)."""
    from runner.spark.session.builder import build_session
    from runner.spark.session.jars import pyspark_version, s3a_coordinates
    from runner.spark.sources.kafka import connector_coordinates
    from runner.specs.target import TargetSpec

    root = tmp_path_factory.mktemp("spark")
    target = TargetSpec(
        name="test",
        master="local[2]",
        warehouse=root / "warehouse",
        checkpoint_root=root / "checkpoints",
        spark_conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"},
    )
    short_lived = os.environ["RUNNER_JVM_OPTIONS"]
    os.environ["RUNNER_JVM_OPTIONS"] = SUITE_JVM_OPTIONS
    # with Spark's Kafka connector, so `runner run` of a Kafka model can run in-process (``cli``)
    kafka = connector_coordinates(pyspark_version())
    s3a = s3a_coordinates()  # and S3A: tests/s3 run commands on targets on s3a:// in-process
    try:
        session = build_session(target, app_name="runner-tests", extra_jars=kafka + s3a)
    finally:
        os.environ["RUNNER_JVM_OPTIONS"] = short_lived
    yield session
    session.stop()


@pytest.fixture
def cli(spark: SparkSession) -> Callable[..., Result]:
    """Invoke the runner CLI in-process; returns typer's Result. build_session's getOrCreate
    joins the suite's session (``spark``) instead of starting a JVM of its own: a `runner`
    subprocess costs a JVM start (10 to 20 s on 2 busy cores), so only tests about the process
    itself (a SIGKILL, a signal, a cluster) run one."""
    from typer.testing import CliRunner

    from runner.cli.app import app

    runner = CliRunner()

    def invoke(*args: str | Path) -> Result:
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)

    return invoke


@pytest.fixture
def project_factory(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(1000))

    def make(models: dict[str, str], **kwargs: object) -> Path:
        return write_project(tmp_path / f"project{next(counter)}", models, **kwargs)

    return make


# Tests that mostly wait on other processes (`runner` restarted again and again, a Kafka
# broker, a local cluster): under pytest-xdist each group runs on one worker, beside the tests
# that use the suite's own session, and its session-scoped servers start once. Several groups of
# a few minutes each rather than two long ones: the scheduler hands out a group whole, so
# smaller ones let it keep both workers busy to the end.
PROCESS_GROUPS = {
    "catalog": "catalog",  # the metastore's PostgreSQL
    "cluster": "cluster",
    "install": "install",  # a fresh virtualenv, pip install, runner init and build
    "kafka": "kafka",  # one broker for the folder (tests/kafka/conftest.py)
    "s3": "s3",  # a local object store (moto), `runner` racing for a lease on it
    "test_crash_recovery.py": "processes",
    "test_live_view.py": "processes",
}


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's, known only when it is loaded
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """Under ``--dist loadgroup``, the longest groups first (tests/scheduling.py says why)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from tests.scheduling import LongestFirst

    return LongestFirst(config, log)  # type: ignore[arg-type]


@pytest.hookimpl(wrapper=True)  # around pytest-xdist's own hook, which reads the groups
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Iterator[None]:
    grouped = []
    for item in items:
        group = PROCESS_GROUPS.get(item.path.parent.name) or PROCESS_GROUPS.get(item.path.name)
        if group is not None and item.path.parent.name != "unit":
            item.add_marker(pytest.mark.xdist_group(group))
            grouped.append(item)
    yield
    # pytest-xdist marks a grouped test by suffixing its node id; a pytest it does not know can
    # drop that silently (9.2 did), and each worker then starts its own servers. Such a test
    # fails before its fixtures start anything, saying why.
    if getattr(config.option, "loadgroup", False):
        for item in grouped:
            if "@" not in item.nodeid:
                item.add_marker(pytest.mark.ungrouped)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("ungrouped") is not None:
        pytest.fail(
            f"pytest {pytest.__version__} with this pytest-xdist did not put the test in its "
            "--dist loadgroup group: install the pytest and pytest-xdist versions pinned in "
            "pyproject.toml (bash scripts/bootstrap.sh does)",
            pytrace=False,
        )


Report = Callable[[str, list[str]], None]


@pytest.fixture
def report(request: pytest.FixtureRequest) -> Report:
    """``report(title, lines)``: lines shown in the terminal summary at the end of the run (the
    kills of a crash test). Under pytest-xdist a worker's own output is not shown; this is."""

    def add(title: str, lines: list[str]) -> None:
        text = "\n".join([title, *(f"  {line}" for line in lines)])
        request.node.user_properties.append(("report", text))

    return add


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    texts = [
        f"{test.nodeid}\n{value}"
        for outcome in ("passed", "failed")
        for test in terminalreporter.getreports(outcome)
        if test.when == "call"
        for name, value in test.user_properties
        if name == "report"
    ]
    if texts:
        terminalreporter.section("what the crash tests did")
        for text in texts:
            terminalreporter.write_line(text)
