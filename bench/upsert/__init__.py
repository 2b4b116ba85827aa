"""The upsert bench (issue #12): the runner, a hand-written foreachBatch recipe and a plain
append over the same generated input, and a target-size curve. `bash bench/upsert.sh`."""
