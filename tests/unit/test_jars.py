"""Jar resolution: the pom, the listing parser, and a cache that needs no mvn once filled."""

from pathlib import Path

import pytest

from runner.errors import SetupError
from runner.spark.session import jars


def test_delta_coordinates_match_installed_pyspark() -> None:
    (coordinate,) = jars.delta_coordinates()
    major_minor = ".".join(jars.pyspark_version().split(".")[:2])
    assert coordinate == f"io.delta:delta-spark_{major_minor}_2.13:{jars.DELTA_VERSION}"


def test_listing_parser_reads_runtime_and_compile_only() -> None:
    listing = """
The following files have been resolved:
   io.delta:delta-spark_4.2_2.13:jar:4.4.0:compile -- module delta.spark
   org.scala-lang:scala-library:jar:2.13.17:compile
   org.apache.parquet:parquet-jackson:jar:1.16.0:runtime
   junit:junit:jar:4.13:test
"""
    assert jars._parse_listing(listing) == [
        ("io.delta", "delta-spark_4.2_2.13", "4.4.0"),
        ("org.scala-lang", "scala-library", "2.13.17"),
        ("org.apache.parquet", "parquet-jackson", "1.16.0"),
    ]


@pytest.mark.parametrize(
    ("artifact", "shipped"),
    [("jackson-core", True), ("jackson-core-asl", False), ("delta-spark_4.2_2.13", False)],
)
def test_artifacts_pyspark_ships_are_left_out(artifact: str, shipped: bool) -> None:
    names = {"jackson-core-2.21.2.jar", "scala-library-2.13.18.jar"}
    assert jars._shipped_by_pyspark(artifact, names) is shipped


def test_filled_cache_needs_no_maven(tmp_path: Path, monkeypatch) -> None:
    """Second run: the manifest is read; mvn is never looked up (so no network call)."""
    cache = tmp_path / "jars"
    coordinates = ["io.example:thing:1.0"]
    calls: list[list[str]] = []

    def fake_maven(coords: list[str], target: Path, *_: object) -> list[Path]:
        calls.append(coords)
        target.mkdir(parents=True)
        (target / "thing-1.0.jar").write_bytes(b"jar")
        (target / jars.MANIFEST).write_text("thing-1.0.jar\n")
        return [target / "thing-1.0.jar"]

    monkeypatch.setattr(jars, "_resolve_with_maven", fake_maven)
    first = jars.resolve_jars(coordinates, cache)
    second = jars.resolve_jars(coordinates, cache)
    assert first == second and first[0].read_bytes() == b"jar"
    assert len(calls) == 1


def test_real_cache_is_filled_and_complete() -> None:
    """The Delta jars the test session uses are in the cache with their manifest."""
    resolved = jars.resolve_jars(jars.delta_coordinates())
    names = {p.name for p in resolved}
    assert (
        f"delta-spark_{'.'.join(jars.pyspark_version().split('.')[:2])}_2.13-{jars.DELTA_VERSION}.jar"
        in names
    )
    assert f"delta-storage-{jars.DELTA_VERSION}.jar" in names
    assert not any(n.startswith("scala-library") for n in names)  # pyspark ships it


def test_missing_maven_is_one_clear_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no mvn, no java
    with pytest.raises(SetupError) as info:
        jars.resolve_jars(["io.example:missing:9.9"], tmp_path / "cache")
    assert "mvn" in info.value.message and "\n" not in info.value.message
    assert "apt-get install maven" in (info.value.hint or "")
