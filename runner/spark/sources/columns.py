"""Every column name the parsing sources (``files.py``, ``kafka.py``) give their frames, in one
place. All begin with ``_`` and none reaches a model: a batch's rows carry the declared columns,
``_rescued_data`` (files) and the ``kafka_*`` columns, which are named in the pure half
(runner/config.py, runner/kafka_spec.py) because a target's DDL needs them too.
"""

from __future__ import annotations

# -- both sources -----------------------------------------------------------------------------

# The column Spark's JSON reader (PERMISSIVE mode) fills with the record it could not read.
CORRUPT_COLUMN = "_corrupt_record"
# Why an input row is malformed (the quarantine's ``reason``); null when it is good.
REASON_COLUMN = "_reason"

# -- file sources: each line, where it comes from, and its text --------------------------------

LINE_COLUMN = "_line_text"  # as Spark's ``text`` source read it (bytes, not yet checked as UTF-8)
FILE_COLUMN = "_file"  # its file's path
BLOCK_COLUMN = "_block"  # where the split it was read from starts in its file
LINE_NUMBER_COLUMN = "_line"  # 1-based, in its file
VALID_COLUMN = "_valid"  # false when its bytes are not UTF-8
TEXT_COLUMN = "_text"  # decoded, without a final \r nor a byte-order mark
RAW_COLUMN = "_raw"  # its text as the quarantine keeps it (bad lines only)
FIRST_LINE_COLUMN = "_first_line"  # true on its file's first line (CSV with a header only)
SKIP_COLUMN = "_skip"  # true when it is not input: blank, or a CSV header

# Numbering the lines: one row per split of a file.
ROW_ID_COLUMN = "_id"  # monotonically_increasing_id: consecutive within a partition
SPLIT_FIRST_COLUMN = "_first"  # the smallest row id of the split
SPLIT_LINES_COLUMN = "_n"  # how many lines the split has
SPLIT_HEAD_COLUMN = "_head"  # a file's first line (a CSV file's header)
LINES_BEFORE_COLUMN = "_before"  # how many lines the earlier splits of its file have

# A CSV file's layout, from its header (or the declared columns).
CSV_COLUMNS_COLUMN = "_columns"  # the file's columns, in order
HEADER_ERROR_COLUMN = "_header_error"  # what is wrong with the header, or null
EXTRA_NAMES_COLUMN = "_extra_names"  # the undeclared columns' names
EXTRA_INDEX_COLUMN = "_extra_index"  # and their 1-based places

# Parsing a line.
JSON_STRINGS_COLUMN = "_strings"  # the declared fields' raw text, and CORRUPT_COLUMN
JSON_KEYS_COLUMN = "_keys"  # the object's top-level keys, repeats included
CSV_TOKENS_COLUMN = "_tokens"  # the fields of the line, then a sentinel
# Typing a parsed line: each declared field by its place in the schema (names may be anything).
FIELD_TEXT_PREFIX = "_text_"  # the field's raw text, null when absent
FIELD_VALUE_PREFIX = "_value_"  # its value as the declared type, null when it does not fit
ONLY_DECLARED_COLUMN = "_only_declared"  # JSON: its keys are the declared names, none repeated
FIELD_COUNT_COLUMN = "_fields"  # CSV: how many fields it has (negative: too many, or a quote open)
BROKEN_COLUMN = "_broken"  # what makes the line unreadable before its fields are typed
MISFITS_COLUMN = "_misfits"  # "amount (DECIMAL(10,2)), ...": the fields whose value does not fit

# -- Kafka: the record's own columns, then the value parsed -----------------------------------

KAFKA_RECORD_COLUMNS = {  # Kafka source column -> ours
    "key": "_kafka_key",
    "value": "_kafka_value",
    "topic": "_kafka_topic",
    "partition": "_kafka_partition",
    "offset": "_kafka_offset",
    "timestamp": "_kafka_timestamp",
}
PARSED_COLUMN = "_parsed"  # the value read with the stream's schema
RAW_FIELDS_COLUMN = "_raw_fields"  # every top-level field's raw text
JSON_COLUMN = "_json"  # the value as JSON, null when it is not JSON
