"""The earliest offset a Kafka topic still holds, per partition: what backfill compares with
where the live checkpoint started reading (runner/source_retention.py).

Asked through the JVM's Kafka AdminClient (``listOffsets`` with ``OffsetSpec.earliest()``),
which Spark's Kafka connector brings: the Python client is only a test dependency, and a batch
``spark.read.format("kafka")`` from ``earliest`` would read every record to learn one number per
partition. The client gets the stream's servers and its ``kafka.*`` options (security
settings), as the stream's reader does.
"""

from __future__ import annotations

from py4j.protocol import Py4JError
from pyspark.sql import SparkSession

from runner.errors import ConfigError
from runner.source_retention import Offsets, TopicPartition
from runner.specs.stream import StreamSpec

TIMEOUT_SECONDS = 60
KAFKA_PREFIX = "kafka."


def earliest_offsets(
    spark: SparkSession, stream: StreamSpec, partitions: set[TopicPartition]
) -> Offsets:
    """The earliest offset the broker holds now of each of ``partitions``."""
    if not partitions or stream.kafka is None:
        return {}
    options = {**stream.kafka.source_options(), **stream.reader_options()}
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    admin_package = jvm.org.apache.kafka.clients.admin
    properties = jvm.java.util.Properties()
    for key, value in options.items():
        if key.startswith(KAFKA_PREFIX):
            properties.setProperty(key.removeprefix(KAFKA_PREFIX), str(value))
    try:
        admin = admin_package.Admin.create(properties)
        try:
            request = jvm.java.util.HashMap()
            earliest = admin_package.OffsetSpec.earliest()
            for topic, partition in sorted(partitions):
                request.put(jvm.org.apache.kafka.common.TopicPartition(topic, partition), earliest)
            seconds = jvm.java.util.concurrent.TimeUnit.SECONDS
            answer = admin.listOffsets(request).all().get(TIMEOUT_SECONDS, seconds)
            found: Offsets = {}
            for entry in answer.entrySet().toArray():
                where = entry.getKey()
                found[(str(where.topic()), int(where.partition()))] = int(entry.getValue().offset())
            return found
        finally:
            admin.close()
    except Py4JError as error:  # no such class, options refused, broker unreachable, timeout
        raise ConfigError(
            f"stream '{stream.name}': could not ask Kafka for the earliest offsets of "
            f"{', '.join(sorted({t for t, _ in partitions}))}: {str(error).strip()[:300]}",
            file=stream.file,
            line=stream.line,
            hint="check that the broker is up and the stream's bootstrap_servers and kafka.* "
            "options; backfill checks retention before it reports or applies anything",
        ) from error
