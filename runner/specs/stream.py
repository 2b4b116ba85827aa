"""A streaming source declared in ``streams/*.yml``: its format, path or table, schema, options
and trigger. Loaded by ``runner.streams``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, get_args

from runner.secrets import reveal_all
from runner.specs.kafka import KafkaSpec

# A stream's `format:` (runner/streams.py checks it).
SourceFormat = Literal["json", "csv", "parquet", "rate", "rate-micro-batch", "kafka", "delta"]
SOURCE_FORMATS: tuple[SourceFormat, ...] = get_args(SourceFormat)
# Source formats with a fixed schema, and the formats that read files from a path.
FIXED_SCHEMAS: dict[SourceFormat, str] = {
    "rate": "timestamp TIMESTAMP, value BIGINT",
    "rate-micro-batch": "timestamp TIMESTAMP, value BIGINT",
}
FILE_FORMATS: tuple[SourceFormat, ...] = ("json", "csv", "parquet")
# File formats read line by line: bad lines quarantined, undeclared fields kept in a column.
LINE_FORMATS: tuple[SourceFormat, ...] = ("json", "csv")
RESCUED_COLUMN = "_rescued_data"
RESCUED_COLUMN_DDL = f"{RESCUED_COLUMN} STRING"
KAFKA_FORMAT: Final = "kafka"
DELTA_FORMAT: Final = "delta"
# The columns a Delta Change Data Feed adds to the table's own.
CDF_COLUMNS = "_change_type STRING, _commit_version BIGINT, _commit_timestamp TIMESTAMP"
# When micro-batches start: every interval, or once over what is available now.
TriggerKind = Literal["processing_time", "available_now"]


@dataclass(frozen=True)
class TriggerSpec:
    """When micro-batches start: every ``interval``, or once over what is available now."""

    kind: TriggerKind = "processing_time"
    interval: str = "5 seconds"


@dataclass(frozen=True)
class StreamSpec:
    """A streaming source declared in streams/*.yml."""

    name: str
    file: Path
    line: int
    format: SourceFormat
    path: Path | None
    schema: str | None
    options: dict[str, str]
    trigger: TriggerSpec
    kafka: KafkaSpec | None = None  # format kafka: servers, topics, value format (schema above)
    table: str | None = None  # format delta: a table by name
    ref: str | None = None  # format delta: the target of this model
    change_data_feed: bool = False  # format delta: stream the table's Change Data Feed
    description: str = ""  # documentation only: the manifest and the docs site show it
    option_lines: dict[str, int] = field(default_factory=dict, repr=False)  # option -> line

    def reader_options(self) -> dict[str, str]:
        """``options`` as ``readStream`` receives them: values from env_var() read now
        (runner/secrets.py); elsewhere they are shown as ``env_var('NAME')``."""
        return reveal_all(
            self.options,
            used_in=f"stream '{self.name}' option",
            file=self.file,
            lines=self.option_lines,
            line=self.line,
        )

    @property
    def columns_ddl(self) -> str | None:
        """The schema as a DDL string, for formats whose schema is fixed or declared."""
        return FIXED_SCHEMAS.get(self.format, self.schema)
