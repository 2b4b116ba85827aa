"""Build the SparkSession for a target: Delta jars, Delta SQL extension and catalog."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from runner.config import TargetSpec
from runner.spark.jars import delta_coordinates, resolve_jars

LOG_CONFIG = Path(__file__).resolve().parent / "log4j2.properties"

# Quiet, small defaults for one machine; project.yml's spark_conf overrides any of them.
DEFAULT_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    "spark.sql.shuffle.partitions": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.sql.streaming.stopTimeout": "60000",
    "spark.log.structuredLogging.enabled": "false",
    "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{LOG_CONFIG}",
}


def session_conf(target: TargetSpec, extra_jars: list[str] | None = None) -> dict[str, str]:
    """Every Spark setting of a session for ``target`` (pure: no JVM is started)."""
    jars = [str(p) for p in resolve_jars(delta_coordinates() + list(extra_jars or []))]
    conf = {**DEFAULT_CONF, "spark.sql.warehouse.dir": str(target.warehouse)}
    conf.update(target.spark_conf)
    conf["spark.jars"] = ",".join(filter(None, [conf.get("spark.jars", ""), *jars]))
    return conf


def build_session(
    target: TargetSpec, app_name: str = "runner", extra_jars: list[str] | None = None
) -> SparkSession:
    """Start (or join) the SparkSession for ``target``."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if target.master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no loopback-hostname warning
    builder = SparkSession.builder.master(target.master).appName(app_name)
    for key, value in session_conf(target, extra_jars).items():
        builder = builder.config(key, value)
    # py4j logs every exception a foreachBatch function raises, Java stack and all; the runner
    # reports those itself with the model's file and line.
    logging.getLogger("py4j.clientserver").setLevel(logging.CRITICAL)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
