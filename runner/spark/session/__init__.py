"""Building the SparkSession: the Delta jars, the session's settings, Spark's logging, and
retrying the errors a concurrent writer causes."""
