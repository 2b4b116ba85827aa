"""Lint rules about the Delta tables models write and read: OPTIMIZE's ZORDER BY columns,
VACUUM's retention, and the Change Data Feed one model reads from another's target.
"""

from __future__ import annotations

from sqlglot import exp

from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import Location, ModelContext, ParsedStatement
from runner.lint.expressions import optimized_table
from runner.sql.dialect import Optimize, Vacuum

CDF_PROPERTY = "delta.enableChangeDataFeed"
SAFE_RETAIN_HOURS = 168  # delta.deletedFileRetentionDuration default: 7 days


class ZorderColumnInvalid(Rule):
    """OPTIMIZE ... ZORDER BY names a partition column or a column the target does not have.

    Delta rejects Z-ordering by a partition column (files are already split by it) and by a
    column missing from the table. The target's columns are `config(columns=...)` or else the
    stream's schema; partition columns are `config(partitioned_by=...)`.
    """

    spark_rejects = True
    code = "DL005"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        project = context.project
        by_target = project.models_by_target
        found = []
        for parsed, optimize in context.expressions(Optimize):
            model = by_target.get(optimized_table(optimize))
            if model is None:
                continue
            partitions = {c.lower() for c in model.config.partitioned_by}
            columns = {c.strip("`").lower() for c in project.target_column_names(model)}
            for column in optimize.args.get("zorder") or []:
                name = column.name.lower()
                if name in partitions:
                    problem = f"is a partition column of {model.target_table}"
                elif columns and name not in columns:
                    problem = f"is not a column of {model.target_table}"
                else:
                    continue
                where = self._where(context, parsed, column)
                message = f"ZORDER BY {column.name}: {problem}"
                found.append(self.violation(context, where, message))
        return found

    @staticmethod
    def _where(context: ModelContext, parsed: ParsedStatement, column: exp.Column) -> Location:
        if parsed.statement.phase == "maintenance":  # rendered from config(zorder_by=...)
            line = context.scan.config_line("zorder_by") or parsed.statement.line
            return context.locate_line(line, column.name)
        return context.locate_node(parsed, column)


class ChangeDataFeedNotEnabled(Rule):
    """The model reads another target's Change Data Feed, but that target does not enable it.

    `table_changes('silver.orders', ...)` (or `table_changes('{{ ref("orders_merge") }}', ...)`)
    fails at run time unless the model that writes `silver.orders` sets
    `table_properties={'delta.enableChangeDataFeed': 'true'}`. The same holds for a model whose
    stream is declared with `format: delta`, `ref: <model>` and `change_data_feed: true`.
    """

    spark_rejects = True
    code = "DL006"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        by_target = context.project.models_by_target
        found = self._stream_reads(context)
        for parsed, func in context.expressions(exp.Anonymous):
            if func.name.lower() != "table_changes" or not func.expressions:
                continue
            first = func.expressions[0]
            if not (isinstance(first, exp.Literal) and first.is_string):
                continue
            writer = by_target.get(first.name.lower())
            if writer is None:
                continue
            enabled = writer.config.table_properties.get(CDF_PROPERTY, "false").lower() == "true"
            if not enabled:
                message = (
                    f"reads the Change Data Feed of {writer.target_table}, but model "
                    f"{writer.name} does not set table_properties={{'{CDF_PROPERTY}': 'true'}}"
                )
                found.append(self.violation(context, context.locate_node(parsed, first), message))
        return found

    def _stream_reads(self, context: ModelContext) -> list[Violation]:
        """The model's stream reads another model's Change Data Feed (streams/*.yml)."""
        model = context.model
        stream = context.project.streams.get(model.config.stream or "") if model else None
        writer = context.project.models.get(getattr(stream, "ref", None) or "")
        if stream is None or not stream.change_data_feed or writer is None:
            return []
        if writer.config.table_properties.get(CDF_PROPERTY, "false").lower() == "true":
            return []
        line = context.scan.config_line("stream") or 1
        message = (
            f"stream {stream.name} reads the Change Data Feed of {writer.target_table}, but model "
            f"{writer.name} does not set table_properties={{'{CDF_PROPERTY}': 'true'}}"
        )
        return [self.violation(context, context.locate_line(line, stream.name), message)]


class VacuumRetainBelowDefault(Rule):
    """`VACUUM ... RETAIN n HOURS` with n under Delta's safe default of 168 hours (7 days).

    Delta refuses the shortest retentions (`RETAIN 0 HOURS`:
    `DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT`) unless
    `spark.databricks.delta.retentionDurationCheck.enabled` is false, but runs others under 168
    hours (`RETAIN 100 HOURS` in the differential test against Spark), and either way it deletes
    files that running streams, time travel and concurrent readers may still need (the stream's
    own checkpoint can point at them). Keep `RETAIN` at 168 hours or more, or leave it out.
    """

    code = "DL013"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        found = []
        for parsed, vacuum in context.expressions(Vacuum):
            hours = vacuum.retain_hours
            if hours is not None and hours < SAFE_RETAIN_HOURS:
                if parsed.statement.line_map:
                    where = context.locate_node(parsed, vacuum.args.get("retain"))
                else:  # runner-generated maintenance: reported at config()
                    where = context.locate_line(parsed.statement.line, "vacuum")
                message = (
                    f"VACUUM RETAIN {hours:g} HOURS is under Delta's safe default of "
                    f"{SAFE_RETAIN_HOURS} hours: it deletes files that streams and time travel "
                    "still read (Delta refuses the shortest retentions outright)"
                )
                found.append(self.violation(context, where, message))
        return found
