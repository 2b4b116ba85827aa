"""The driver heap of a local master: a quarter of the machine's (or its container's) memory,
between Spark's 1g and the JVM's 31g, unless project.yml or SPARK_DRIVER_MEMORY says otherwise;
other masters keep Spark's setting. No JVM: ``session_conf`` is pure once the jars are known."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.spark.session import builder
from runner.spark.session.builder import local_driver_memory, machine_memory_bytes, session_conf
from runner.specs.target import TargetSpec

GIB = 1024**3


def target(master: str, spark_conf: dict[str, str] | None = None) -> TargetSpec:
    return TargetSpec(
        name="t",
        master=master,
        warehouse=Path("/tmp/warehouse"),
        checkpoint_root=Path("/tmp/checkpoints"),
        spark_conf=spark_conf or {},
    )


@pytest.fixture
def no_jars(monkeypatch: pytest.MonkeyPatch) -> None:
    """session_conf without resolving Delta's jars (not what these tests are about)."""
    monkeypatch.setattr(builder, "resolve_jars", lambda coordinates: [])
    monkeypatch.delenv("SPARK_DRIVER_MEMORY", raising=False)


@pytest.mark.parametrize(
    ("memory", "heap"),
    [
        (24 * GIB, "6144m"),  # a quarter
        (6 * GIB + 100 * 1024**2, "1561m"),  # whole MiB, rounded down
        (2 * GIB, "1024m"),  # never below Spark's own 1g
        (512 * GIB, "31744m"),  # never past the JVM's compressed pointers
    ],
)
def test_a_local_heap_is_a_quarter_of_the_memory_within_bounds(memory: int, heap: str) -> None:
    assert local_driver_memory(memory) == heap


def test_a_container_limit_below_the_machine_is_the_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unlimited, limited = tmp_path / "memory.max", tmp_path / "memory.limit_in_bytes"
    unlimited.write_text("max\n")
    limited.write_text(f"{2 * GIB}\n")
    monkeypatch.setattr(builder, "CGROUP_MEMORY_LIMITS", (unlimited, tmp_path / "absent"))
    machine = machine_memory_bytes()
    assert machine > 2 * GIB  # "max" and a missing file leave the machine's memory
    monkeypatch.setattr(builder, "CGROUP_MEMORY_LIMITS", (unlimited, limited))
    assert machine_memory_bytes() == 2 * GIB


@pytest.mark.usefixtures("no_jars")
def test_a_local_master_gets_the_heap_and_other_masters_do_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(builder, "machine_memory_bytes", lambda: 24 * GIB)
    assert session_conf(target("local[*]"))["spark.driver.memory"] == "6144m"
    assert session_conf(target("local[2]"))["spark.driver.memory"] == "6144m"
    assert "spark.driver.memory" not in session_conf(target("spark://127.0.0.1:7077"))


@pytest.mark.usefixtures("no_jars")
def test_project_yml_and_spark_driver_memory_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builder, "machine_memory_bytes", lambda: 24 * GIB)
    conf = session_conf(target("local[*]", {"spark.driver.memory": "2g"}))
    assert conf["spark.driver.memory"] == "2g"
    monkeypatch.setenv("SPARK_DRIVER_MEMORY", "3g")  # Spark's launcher reads it when conf has none
    assert "spark.driver.memory" not in session_conf(target("local[*]"))
