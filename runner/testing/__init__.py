"""Seeds, data tests and model unit tests: the pure half (YAML specs, CSV checks, test SQL,
row diffs, JUnit XML). Nothing here imports pyspark; runner/spark/ runs what is built here."""
