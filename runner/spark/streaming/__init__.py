"""Running models' streaming queries: start, watch and stop them; ``foreachBatch`` over Spark
Connect; the check that each model's checkpoint and target still belong together."""
