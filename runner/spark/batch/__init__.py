"""One micro-batch, start to finish: ``run_batch``, the batch's facts, row expectations, the
schema-drift policy, the report, its event-log row, and where its seconds went."""
