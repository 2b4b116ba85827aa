"""Fixtures shared by every test folder. Nothing here imports pyspark until a test asks for
``spark``."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

REPO = Path(__file__).resolve().parents[1]

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
        help="the thorough profile: many more hypothesis examples per property (minutes more); "
        "CI runs the default profile, run this one before a release or after touching a macro",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Choose the hypothesis profile before test modules (and their @settings) are imported."""
    from hypothesis import settings

    settings.register_profile("default", max_examples=10)
    settings.register_profile("slow", max_examples=60)
    settings.load_profile("slow" if config.getoption("--slow") else "default")


@pytest.fixture
def example_project(tmp_path: Path) -> Path:
    """A copy of the repository's example project (models, streams, macros, sample data)."""
    root = tmp_path / "example"
    root.mkdir()
    for item in ("project.yml", "models", "macros", "streams", "seeds", "sample_data"):
        source = REPO / item
        if source.is_dir():
            shutil.copytree(source, root / item)
        elif source.exists():
            shutil.copy2(source, root / item)
    return root


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """The suite's one SparkSession: real Spark, real Delta, small and quiet. Only tests that ask
    for it start a JVM (pyspark is imported here, lazily, for the same reason)."""
    from runner.config import TargetSpec
    from runner.spark.session import build_session

    root = tmp_path_factory.mktemp("spark")
    target = TargetSpec(
        name="test",
        master="local[2]",
        warehouse=root / "warehouse",
        checkpoint_root=root / "checkpoints",
        spark_conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"},
    )
    session = build_session(target, app_name="runner-tests")
    yield session
    session.stop()


@pytest.fixture
def project_factory(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(1000))

    def make(models: dict[str, str], **kwargs: object) -> Path:
        return write_project(tmp_path / f"project{next(counter)}", models, **kwargs)

    return make
