"""Resolve the JVM jars Spark needs (Delta, the Kafka connector, the S3A connector) from Maven
Central.

The delta-spark wheel carries no jars, and Spark's own Ivy resolution is slow and opaque. We
write a tiny pom, let ``mvn`` resolve it, and copy into a cache directory the jars that pyspark
does not already ship. The cache is keyed by the coordinates: once it is filled, later runs read
its manifest and make no network call and do not need ``mvn`` at all.

Importing this module does not import pyspark or start a JVM.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from runner.errors import SetupError
from runner.specs.target import TargetSpec
from runner.storage import scheme_of

DELTA_VERSION = "4.4.0"
# The JDBC driver of a Hive metastore on PostgreSQL (a target's catalog:), fetched only then.
POSTGRESQL_JDBC = "org.postgresql:postgresql:42.7.4"
SCALA_BINARY = "2.13"
# The AWS SDK v2 that hadoop-aws declares (hadoop-project's aws-java-sdk-v2.version); S3A needs
# only these modules of it, not the `bundle` of every AWS service hadoop-aws depends on.
AWS_SDK_VERSION = "2.35.4"
S3A_SDK_MODULES = ("s3", "s3-transfer-manager", "sts")
# S3A's input streams: every S3A filesystem loads this library's client when it starts
ANALYTICS_ACCELERATOR = "software.amazon.s3.analyticsaccelerator:analyticsaccelerator-s3:1.3.1"
# Taken alone: their declared dependencies are what the modules above replace.
WITHOUT_DEPENDENCIES = frozenset({"org.apache.hadoop:hadoop-aws"})
MANIFEST = "jars.txt"
_COORDINATE = re.compile(r"^\s*([\w.\-]+):([\w.\-]+):jar:([\w.\-]+):(compile|runtime)")


def pyspark_jars_dir() -> Path:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise SetupError("pyspark is not installed", hint="run: pip install -e .")
    return Path(spec.origin).parent / "jars"


def pyspark_version() -> str:
    from importlib.metadata import version

    return version("pyspark")


def delta_coordinates() -> list[str]:
    """Maven coordinates of Delta Lake for the installed pyspark (major.minor)."""
    major_minor = ".".join(pyspark_version().split(".")[:2])
    return [f"io.delta:delta-spark_{major_minor}_{SCALA_BINARY}:{DELTA_VERSION}"]


def pyspark_hadoop_version() -> str:
    """The Hadoop client version pyspark ships (``hadoop-client-api-3.5.0.jar``): the version of
    any Hadoop connector Spark loads beside it."""
    for jar in pyspark_jars_dir().glob("hadoop-client-api-*.jar"):
        return jar.name.removeprefix("hadoop-client-api-").removesuffix(".jar")
    raise SetupError(
        f"no hadoop-client-api jar in {pyspark_jars_dir()}: cannot tell which hadoop-aws matches",
        hint="reinstall pyspark (pip install -e .)",
    )


def s3a_coordinates() -> list[str]:
    """Maven coordinates of the S3A connector (``s3a://``) for the installed pyspark: hadoop-aws
    of pyspark's Hadoop and the AWS SDK modules it uses."""
    sdk = [f"software.amazon.awssdk:{module}:{AWS_SDK_VERSION}" for module in S3A_SDK_MODULES]
    return [f"org.apache.hadoop:hadoop-aws:{pyspark_hadoop_version()}", ANALYTICS_ACCELERATOR, *sdk]


def storage_coordinates(target: TargetSpec) -> list[str]:
    """The Hadoop connector ``target``'s warehouse and checkpoints need: S3A for ``s3a://``;
    none on a local disk (so a local target downloads nothing for it)."""
    schemes = {scheme_of(target.warehouse), scheme_of(target.checkpoint_root)}
    return s3a_coordinates() if "s3a" in schemes else []


def default_cache_dir() -> Path:
    """``RUNNER_JARS_DIR`` if set, else ``.cache/jars`` in the checkout the runner runs from
    (git-ignored), else ``~/.cache/delta-stream-runner/jars`` for an installed package."""
    if os.environ.get("RUNNER_JARS_DIR"):
        return Path(os.environ["RUNNER_JARS_DIR"])
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "pyproject.toml").exists():
        return checkout / ".cache" / "jars"
    return Path.home() / ".cache" / "delta-stream-runner" / "jars"


def resolve_jars(
    coordinates: list[str],
    cache_dir: Path | None = None,
    *,
    skip_pyspark_jars: bool = True,
) -> list[Path]:
    """Absolute paths of the jars for ``coordinates`` and their runtime dependencies,
    resolving them with mvn only when the cache does not have them yet.

    For Spark (the default) the libraries pyspark already ships are left out. A classpath for a
    separate JVM (the local Kafka broker) passes ``skip_pyspark_jars=False`` to get them all.
    """
    target = cache_entry(coordinates, cache_dir, skip_pyspark_jars)
    return cached_jars(target) or _resolve_with_maven(coordinates, target, skip_pyspark_jars)


def cache_entry(
    coordinates: list[str], cache_dir: Path | None = None, skip_pyspark_jars: bool = True
) -> Path:
    """The cache directory of ``coordinates`` (keyed by them and the pyspark version)."""
    parts = [pyspark_version(), *sorted(coordinates)]
    if not skip_pyspark_jars:
        parts.append("unfiltered")  # a separate cache entry; the Spark entries keep their keys
    key = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return (cache_dir or default_cache_dir()) / key[:16]


def cached_jars(entry: Path) -> list[Path] | None:
    """The jars of a cache entry when its manifest and every jar are there, else None."""
    manifest = entry / MANIFEST
    if not manifest.exists():
        return None
    jars = [entry / name for name in manifest.read_text().split()]
    return jars if all(jar.exists() for jar in jars) else None


def _resolve_with_maven(
    coordinates: list[str],
    target: Path,
    skip_pyspark_jars: bool = True,
) -> list[Path]:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SetupError(
            "Maven (mvn) is not on PATH; it is needed once to download the jars "
            f"({', '.join(coordinates)})",
            hint="install it (Debian: apt-get install maven) or set RUNNER_JARS_DIR to a "
            "directory that already holds the jars",
        )
    if shutil.which("java") is None:
        raise SetupError(
            "java is not on PATH; Spark needs a Java 17 or 21 runtime",
            hint="install one (Debian: apt-get install openjdk-17-jre-headless)",
        )
    shipped = {p.name for p in pyspark_jars_dir().glob("*.jar")} if skip_pyspark_jars else set()
    with tempfile.TemporaryDirectory(prefix="runner-jars-") as tmp:
        work = Path(tmp)
        (work / "pom.xml").write_text(_pom(coordinates))
        listing = work / "dependencies.txt"
        staging = work / "jars"
        command = [
            mvn, "-B", "-q", "-f", str(work / "pom.xml"),
            "dependency:list", f"-DoutputFile={listing}", "-DincludeScope=runtime",
            "dependency:copy-dependencies", f"-DoutputDirectory={staging}",
            "-DincludeScope=runtime",
        ]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
            raise SetupError(
                f"mvn could not resolve {', '.join(coordinates)}",
                detail=tail,
                hint="check network access to Maven Central, or the version pins in "
                "runner/spark/session/jars.py",
            )
        wanted = []
        for _group, artifact, version in _parse_listing(listing.read_text()):
            if not _shipped_by_pyspark(artifact, shipped):
                wanted.append(f"{artifact}-{version}.jar")
        target.mkdir(parents=True, exist_ok=True)
        for name in wanted:
            shutil.copy2(staging / name, target / name)
        (target / MANIFEST).write_text("\n".join(sorted(wanted)) + "\n")
    return [target / name for name in sorted(wanted)]


def _shipped_by_pyspark(artifact: str, shipped: set[str]) -> bool:
    """pyspark already has this library (in some version): keep Spark's, not a second copy."""
    prefix = f"{artifact}-"
    return any(n.startswith(prefix) and n[len(prefix) : len(prefix) + 1].isdigit() for n in shipped)


def _parse_listing(text: str) -> list[tuple[str, str, str]]:
    matches = (_COORDINATE.match(line) for line in text.splitlines())
    return [(m.group(1), m.group(2), m.group(3)) for m in matches if m]


def _dependency(coordinate: str) -> str:
    group, artifact, version = coordinate.split(":")
    exclusions = (
        "<exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion>"
        "</exclusions>"
        if f"{group}:{artifact}" in WITHOUT_DEPENDENCIES
        else ""
    )
    return (
        f"    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
        f"<version>{version}</version>{exclusions}</dependency>"
    )


def _pom(coordinates: list[str]) -> str:
    deps = [_dependency(c) for c in coordinates]
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "  <modelVersion>4.0.0</modelVersion>\n"
        "  <groupId>local.runner</groupId><artifactId>runner-jars</artifactId>"
        "<version>1</version>\n"
        "  <packaging>pom</packaging>\n"
        # Spark's parent pom declares a Google mirror of Maven Central first; where only Maven
        # Central is reachable its unknown host fails the build. A repository of the same id
        # in our own pom takes precedence over one declared by a dependency.
        "  <repositories><repository><id>gcs-maven-central-mirror</id>"
        "<url>https://repo.maven.apache.org/maven2</url></repository></repositories>\n"
        + "  <dependencies>\n"
        + "\n".join(deps)
        + "\n  </dependencies>\n</project>\n"
    )
