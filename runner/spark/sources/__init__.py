"""Where a batch's rows come from: ``readStream`` per source format, the file and Kafka parsers,
reading text as typed values, and the quarantine for the input they reject."""
