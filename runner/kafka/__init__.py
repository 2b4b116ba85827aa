"""Kafka tooling around the runner: a real local broker (``broker``) and a producer of order
events (``producer``). The Spark side of the Kafka source is ``runner.spark.kafka_source``."""
