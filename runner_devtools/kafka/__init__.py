"""Kafka tooling for tests, docs and benchmarks: a real local broker (``broker``) and a producer
of order events (``producer``). The Kafka section of streams/*.yml is ``runner.specs.kafka`` (the
config side); the Spark side of the Kafka source is ``runner.spark.sources.kafka``."""
