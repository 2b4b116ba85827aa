"""A session of its own on the same Spark: its own temporary views and settings, so that work
running at the same time (model unit tests, each with its batch view and settings) cannot see
another's. Over Spark Connect, a clone of the server-side session (one round trip); in this
process, a new session on the same SparkContext with the settings of the one it comes from."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, cast

from pyspark.sql import SparkSession

from runner.spark.session.kind import driver_in_process

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession as ConnectSession


@contextmanager
def isolated_session(spark: SparkSession) -> Iterator[SparkSession]:
    """A session like ``spark`` (same settings, same catalog) whose temporary views and settings
    are its own; released when the block ends."""
    if not driver_in_process(spark):  # Spark Connect
        clone = cast("ConnectSession", spark).cloneSession()
        try:
            yield cast(SparkSession, clone)  # the runner types both kinds as SparkSession
        finally:
            clone.client.release_session()
            clone.client.close()
        return
    yield sibling_session(spark)


def sibling_session(spark: SparkSession) -> SparkSession:
    """A new session on ``spark``'s SparkContext (same catalog, same cached Delta logs) with the
    settings of ``spark``, whose later settings are its own (a classic session only)."""
    session = spark.newSession()
    # a new session starts from the SparkContext's settings; those set on ``spark`` since (the
    # session time zone of a test fixture, say) are copied
    for key, value in spark.conf.getAll.items():
        if session.conf.get(key, None) != value and spark.conf.isModifiable(key):
            session.conf.set(key, value)
    return session
