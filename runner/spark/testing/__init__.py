"""The Spark side of ``runner test`` and ``runner seed``: model unit tests through
``run_batch``, data tests, seeds, and typed frames from checked text rows."""
