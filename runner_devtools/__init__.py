"""Tooling for developing and trying the runner, kept out of the product: a local Kafka broker
and a producer of order events (``kafka``), a local S3-compatible object store
(``object_store``), a local Spark standalone cluster with a Spark Connect server
(``local_cluster``, driven by ``python -m runner_devtools.cluster``), and a PostgreSQL for a
shared Hive metastore (``python -m runner_devtools.metastore``).

The tests, the docs and the benchmarks use it; ``runner/`` never imports it (the import-graph
test checks that). It may import the product, never the other way."""
