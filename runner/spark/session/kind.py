"""Which kind a SparkSession is, told without importing pyspark's Spark Connect client, which
brings pandas and gRPC with it: about 0.4 s of a command's start, for nothing on a classic
session. The modules that need the client (``connect_watch``) are imported where a Connect
session is in hand."""

from __future__ import annotations

from pyspark.sql import SparkSession


def driver_in_process(spark: SparkSession) -> bool:
    """Whether ``spark`` is a classic session: its driver, and so Delta's reads of a table's
    log, run in this process's JVM, on this machine's disks. False for a Spark Connect
    session, the client of a server that may run elsewhere (pyspark's Connect session class
    does not derive from the classic one)."""
    return isinstance(spark, SparkSession)
