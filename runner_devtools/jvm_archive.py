"""A class data sharing (CDS) archive for the short-lived Spark drivers of the test suite.

Each `runner` process the tests start (killed and restarted, on a cluster, racing for a lease)
starts a Spark driver JVM that loads some 20,000 classes from pyspark's jars before its first
batch. A dynamic CDS archive (JDK 13 and later) holds those classes already parsed and
verified: a JVM started with ``-XX:SharedArchiveFile`` maps them instead: a `runner run` of the
example costs about a tenth less CPU (bench/class_archive_bench.py, CONTRIBUTING.md "The JVM
class archive").

The archive is made once by one `runner run` of the example that exits normally with
``-XX:ArchiveClassesAtExit`` (about a minute) and kept in ``.cache/jvm/``, named for the pyspark
and Delta versions and the ``java`` binary: another of any makes another archive. A JVM whose class
path differs from the one the archive was made with (a cluster's executors and daemons, the
Connect server, a driver with extra class path entries) cannot use it and runs as it would
without it; ``-Xlog:cds=off`` keeps it from saying so in the runner's output.

    python -m runner_devtools.jvm_archive   # make it unless it exists (scripts/test.sh does)

tests/conftest.py adds ``jvm_options()`` to ``$RUNNER_JVM_OPTIONS`` when the archive exists.
A development tool, not a `runner` command.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runner.processes import JVM_OPTIONS_ENV
from runner.spark.session.jars import delta_coordinates, pyspark_version
from runner_devtools.example_project import REPO, copy_example

ARCHIVE_DIR = REPO / ".cache" / "jvm"
DUMP_TIMEOUT_SECONDS = 600.0
# The flags of every JVM the tests start through the runner (a `runner` subprocess, a cluster's
# daemons and executors, the Connect server): each lives for seconds to minutes on a few rows,
# and the quick JIT tier and the serial collector do that work with about a third less CPU.
SHORT_LIVED_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def archive_path() -> Path | None:
    """Where the archive for this pyspark, Delta and ``java`` lives; None without a ``java``."""
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if java is None or not Path(java).exists():
        return None
    binary = Path(java).resolve()
    stat = binary.stat()
    delta = " ".join(delta_coordinates())  # Delta's classes are in it too
    key = f"{pyspark_version()} {delta} {binary} {stat.st_size} {stat.st_mtime_ns}"
    return ARCHIVE_DIR / f"spark-driver-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"


def jvm_options() -> str:
    """The flags that make a JVM use the archive, or '' when it has not been made."""
    path = archive_path()
    if path is None or not path.exists():
        return ""
    return f"-XX:SharedArchiveFile={path} -Xlog:cds=off -Xlog:cds+dynamic=off"


def make(jvm_options: str) -> Path:
    """Make the archive (unless it exists) with a `runner run` whose JVM has ``jvm_options``
    (the suite's short-lived flags). Returns its path."""
    path = archive_path()
    if path is None:
        raise SystemExit("no java found: set JAVA_HOME or put java on the PATH")
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    with tempfile.TemporaryDirectory(prefix="runner-jvm-archive-") as directory:
        project = copy_example(Path(directory) / "example")
        # made from the example's orders_merge on one sample file
        landing = project / "target" / "landing" / "orders"
        landing.mkdir(parents=True)
        shutil.copy2(project / "sample_data" / "orders" / "001.json", landing / "001.json")
        options = f"{jvm_options} -XX:ArchiveClassesAtExit={partial}".strip()
        result = subprocess.run(
            [str(Path(sys.executable).parent / "runner"), "run", "-m", "orders_merge"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=DUMP_TIMEOUT_SECONDS,
            env={**os.environ, JVM_OPTIONS_ENV: options},
            check=False,
        )
    if result.returncode != 0 or not partial.exists():
        partial.unlink(missing_ok=True)
        raise SystemExit(
            "the run that makes the JVM archive failed (exit "
            f"{result.returncode}):\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
        )
    partial.replace(path)  # whole or not at all: a JVM never maps a half-written archive
    return path


if __name__ == "__main__":
    started = time.monotonic()
    existed = (archive_path() or Path("/nonexistent")).exists()
    made = make(SHORT_LIVED_JVM_OPTIONS)
    what = "kept" if existed else f"made in {time.monotonic() - started:.0f} s"
    print(f"JVM class archive {what}: {made}")
