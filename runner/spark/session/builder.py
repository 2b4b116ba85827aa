"""Build the SparkSession for a target: Delta jars, Delta SQL extension and catalog."""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import shutil
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from pyspark.errors import PySparkRuntimeError
from pyspark.sql import SparkSession

from runner.error_text import first_line
from runner.errors import ConfigError, SetupError
from runner.processes import with_extra_jvm_options
from runner.s3_files import target_s3_settings
from runner.spark.session.hadoop_files import attach_session_files
from runner.spark.session.jars import (
    POSTGRESQL_JDBC,
    delta_coordinates,
    resolve_jars,
    storage_coordinates,
)
from runner.spark.session.jvm_stderr import without_incubator_warning
from runner.specs.target import TargetSpec
from runner.target_address import TargetUnreachable, check_reachable, unreachable_message

LOG_CONFIG = Path(__file__).resolve().parent / "log4j2.properties"

# Settings a Spark Connect client may set on its session (the rest are the server's).
CONNECT_SESSION_DEFAULTS = ("spark.sql.shuffle.partitions", "spark.sql.session.timeZone")
CONNECT_TIMEOUT_SECONDS = 10

CODEGEN_CACHE = "spark.sql.codegen.cache.maxEntries"
CODEGEN_CACHE_ENTRIES = "1000"

# Quiet, small defaults for one machine; project.yml's spark_conf overrides any of them.
DEFAULT_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    "spark.sql.shuffle.partitions": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    # Delta replays a table's log into this many partitions for each new version (50 by
    # default): one instead of two took 0.07 to 0.12 s off a 2,000-row MERGE's 1.1 s in four of
    # six runs on two cores, nothing in two (bench/README.md, the floor); raise it for tables
    # of many thousand files
    "spark.databricks.delta.snapshotPartitions": "1",
    # Delta's VACUUM lists a table in a job of this many tasks (Spark's default: 10,000),
    # minutes of a maintenance batch on a few cores (bench/results/vacuum-listing.md)
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "4",
    "spark.sql.streaming.stopTimeout": "60000",
    # In a JVM whose time zone is not UTC, Delta 4.4 checks the file list it keeps in a small
    # table's commit checksums by rebuilding the table's whole state on every commit; nothing in
    # open-source Delta reads that list, and the check made an event-log append of a batch
    # take 0.54 s instead of 0.24 (bench/results/non-utc.md)
    "spark.databricks.delta.allFilesInCrc.verificationMode.forceOnNonUTC.enabled": "false",
    # Spark keeps the classes it compiles from a plan's generated code in one cache per JVM,
    # of 100 entries by default, split into segments that evict on their own. One batch of a
    # model needs about 95 (the source's typing, the dedupe, Delta's MERGE and its snapshot
    # state), so each batch compiled most of them again, and the JIT then compiled those:
    # 50 batches of 2,000 events compiled 1,952 classes in 25 s, with 1,000 entries 120 in 4 s
    # (bench/README.md, "Choices, each isolated"). A static setting: read at session start.
    CODEGEN_CACHE: CODEGEN_CACHE_ENTRIES,
    # A table's newest version is found by listing its _delta_log folder, on every query and
    # every write. Delta writes its commits and their checksums (``<version>.crc``) through
    # Hadoop's FileContext, which on a local disk writes a hidden checksum file beside each
    # (``.00000000000000000042.json.crc``): a log of 500 commits held 2,101 entries instead of
    # 1,100, and a one-file table's full scan took 1.41 x a new table's time against 1.17
    # without them (bench/results/delta-log-length.md). The raw local FileContext writes none.
    # Only FileContext's: Hadoop's FileSystem.getLocal needs the checksummed FileSystem (S3A
    # buffers uploads through it), so Parquet files, Delta's checkpoints among them, keep theirs.
    "spark.hadoop.fs.AbstractFileSystem.file.impl": "org.apache.hadoop.fs.local.RawLocalFs",
    "spark.log.structuredLogging.enabled": "false",
    "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{LOG_CONFIG}",
}


# On a local master the driver's heap is the only executor's too: every batch is parsed, cached
# and merged in it. Spark gives it 1g unless told otherwise; the runner gives it what the JVM
# itself would take, a quarter of the machine's memory (its container's, when that is less),
# never less than Spark's 1g and below the 32 GB where the JVM's compressed pointers end. With
# 1g the JVM spends much of a batch collecting garbage: on 24 GB and 2 cores a batch of 100,000
# events took a median 4.95 s with 6g against 6.23 s, one of 2,000 events 1.83 s against 2.00
# (bench/results/before-after-local-driver-heap-*.md).
LOCAL_HEAP_SHARE = 4
MIN_LOCAL_HEAP_MIB = 1024
MAX_LOCAL_HEAP_MIB = 31 * 1024
CGROUP_MEMORY_LIMITS = (
    Path("/sys/fs/cgroup/memory.max"),  # cgroup v2
    Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),  # cgroup v1
)


def machine_memory_bytes() -> int:
    """The memory this process may use: the machine's, or its container's limit when lower."""
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    for limit_file in CGROUP_MEMORY_LIMITS:
        try:
            limit = limit_file.read_text().strip()
        except OSError:
            continue
        if limit.isdigit():  # "max" (v2) means no limit
            total = min(total, int(limit))
    return total


def local_driver_memory(memory_bytes: int) -> str:
    """``spark.driver.memory`` for a local master on a machine with ``memory_bytes``."""
    mib = memory_bytes // LOCAL_HEAP_SHARE // (1024 * 1024)
    return f"{min(max(mib, MIN_LOCAL_HEAP_MIB), MAX_LOCAL_HEAP_MIB)}m"


def session_conf(target: TargetSpec, extra_jars: list[str] | None = None) -> dict[str, str]:
    """Every Spark setting of a session for ``target`` (pure: no JVM is started)."""
    coordinates = delta_coordinates() + storage_coordinates(target) + list(extra_jars or [])
    jars = [str(p) for p in resolve_jars(coordinates)]
    conf = {**DEFAULT_CONF, "spark.sql.warehouse.dir": str(target.warehouse)}
    if target.kind == "local" and not os.environ.get("SPARK_DRIVER_MEMORY"):
        conf["spark.driver.memory"] = local_driver_memory(machine_memory_bytes())
    if target.catalog is not None:
        # On the driver's class path, not in spark.jars: the metastore's connection pool asks
        # java.sql.DriverManager, which sees only the JVM's own class path.
        driver = [str(p) for p in resolve_jars([POSTGRESQL_JDBC])]  # an entry of its own
        conf["spark.driver.extraClassPath"] = os.pathsep.join(driver)
    conf.update(target.revealed_conf())
    conf["spark.jars"] = ",".join(filter(None, [conf.get("spark.jars", ""), *jars]))
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        options = with_extra_jvm_options(conf.get(key, ""))
        if options:
            conf[key] = options
    return conf


def build_session(
    target: TargetSpec,
    app_name: str = "runner",
    extra_jars: list[str] | None = None,
    stop: threading.Event | None = None,
) -> SparkSession:
    """Start (or join) the SparkSession for ``target``: in this process for local[*], as the
    driver of a standalone cluster for spark://, as a thin client of a Connect server for sc://.
    A cluster address that does not answer fails in seconds, before a JVM starts. ``stop``
    (over Connect): once set, a call the server does not answer is not retried."""
    address = target.address
    if address is not None:
        check_reachable(target.name, address)
    if target.remote:
        return connect_session(target, stop)
    java_home = os.environ.get("JAVA_HOME")
    if java_home and not (Path(java_home) / "bin" / "java").exists():
        raise java_did_not_start()  # before mvn or spark-class print their own complaints
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if target.kind == "local" or (address is not None and address.host in LOOPBACK):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no loopback-hostname warning
    builder = SparkSession.builder.master(target.master).appName(app_name)
    for key, value in session_conf(target, extra_jars).items():
        builder = builder.config(key, value)
    # py4j logs every exception a foreachBatch function raises, Java stack and all; the runner
    # reports those itself with the model's file and line.
    logging.getLogger("py4j.clientserver").setLevel(logging.CRITICAL)
    try:
        with without_incubator_warning():  # the JVM starts here and inherits stderr
            spark = builder.getOrCreate()
    except PySparkRuntimeError as exc:
        if exc.getCondition() != "JAVA_GATEWAY_EXITED":
            raise
        raise java_did_not_start() from None
    spark.sparkContext.setLogLevel("ERROR")
    attach_session_files(spark, remote=False)
    return spark


def java_did_not_start() -> SetupError:
    """The one-line error when the JVM does not start (pyspark says only that the gateway
    exited; Java's own complaint is on stderr above it)."""
    java_home = os.environ.get("JAVA_HOME")
    java = Path(java_home) / "bin" / "java" if java_home else None
    if java is not None and not java.exists():
        why = f"JAVA_HOME is {java_home}, which has no bin/java"
    elif java is not None:
        why = f"{java} (from JAVA_HOME) exited at once"
    else:
        why = "the java on PATH exited at once" if shutil.which("java") else "no java on PATH"
    return SetupError(
        f"Java did not start, so Spark cannot: {why}",
        hint="point JAVA_HOME at a Java 17 installation (or unset it to use the java on "
        "PATH) and check with: $JAVA_HOME/bin/java -version",
    )


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def connect_session(target: TargetSpec, stop: threading.Event | None = None) -> SparkSession:
    """A new Spark Connect session on ``target.remote``. The server holds Delta's extension
    and jars (``python -m runner_devtools.cluster start --connect``); the client sets only
    session settings.

    The first call runs here under a deadline so that a port that is open but no Connect
    server fails in seconds; later calls retry an unanswered server for the target's
    ``connect_retry_seconds``, and not at all once ``stop`` is set (``ServerWatch``)."""
    from runner.spark.session.connect_watch import ServerWatch, watch_client

    address, remote = target.address, target.remote
    assert remote is not None and address is not None
    outcome: dict[str, object] = {}

    def open_session() -> None:
        try:
            spark = SparkSession.builder.remote(remote).create()
            spark.conf.set("spark.sql.session.timeZone", DEFAULT_CONF["spark.sql.session.timeZone"])
            outcome["spark"] = spark
        except Exception as exc:  # grpc / Connect errors: not a working Connect server
            outcome["error"] = exc

    opener = threading.Thread(target=open_session, daemon=True, name="connect-open")
    opener.start()
    opener.join(CONNECT_TIMEOUT_SECONDS)
    if "spark" not in outcome:
        error = outcome.get("error")
        reason = (
            first_line(error)[:200]
            if isinstance(error, BaseException)
            else f"no Connect answer in {CONNECT_TIMEOUT_SECONDS} s"
        )
        raise TargetUnreachable(unreachable_message(target.name, address, reason))
    spark: SparkSession = outcome["spark"]  # type: ignore[assignment]  # the Connect class
    watch_client(spark, ServerWatch(remote, target.connect_retry_seconds, stop))
    # Released while the interpreter still runs: a Connect session left to the garbage
    # collector at exit can hang in gRPC's channel close, after the command has finished.
    atexit.register(release_connect_session, spark)
    attach_session_files(spark, remote=True, s3=target_s3_settings(target))
    conf = {k: DEFAULT_CONF[k] for k in CONNECT_SESSION_DEFAULTS} | target.revealed_conf()
    for key, value in conf.items():
        try:
            spark.conf.set(key, value)
        except Exception as exc:
            raise ConfigError(
                f"target '{target.name}': spark_conf {key} cannot be set from a Spark Connect "
                f"client ({first_line(exc)[:200]}); set it where the Connect server starts",
            ) from None
    return spark


def release_connect_session(spark: SparkSession) -> None:
    """End a Spark Connect session: the server drops it (its temp views, its confs) and the
    client closes its channel. Best effort, like pyspark's own stop().

    Through the client, not ``stop()``: a session from ``cloneSession()`` lacks attributes
    that ``stop()`` reads (pyspark 4.2), so its channel would stay open until the garbage
    collector closes it at exit, where gRPC's close can hang."""
    from runner.spark.session.connect_watch import watch_of

    client = spark.client
    if client.is_closed:
        return
    watch = watch_of(spark)
    if watch is None or not (watch.outage or watch.gave_up):  # a gone server releases nothing
        with contextlib.suppress(Exception):
            client.release_session()
    with contextlib.suppress(Exception):
        client.close()


@contextlib.contextmanager
def temporary_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """Set session settings for the length of a block, then put back what was there (a setting
    that was not set is unset again)."""
    previous = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value_before in previous.items():
            if value_before is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value_before)
