"""The ``runner test`` feature's pure half: a data test's SQL, the columns a unit test fills, row
diffs, results and JUnit XML. The tests themselves are declared in ``runner.specs``; nothing here
imports pyspark; runner/spark/ runs what is built here."""
