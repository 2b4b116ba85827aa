"""Lint rules about what a model does to its target over many micro-batches: statements Spark
runs without complaint but that destroy or duplicate the target, keep the wrong row, or read a
Change Data Feed wrongly. No generic SQL linter knows them: they follow from the model running
once per micro-batch, with its ``unique_key`` and ``sequence_by``.
"""

from __future__ import annotations

from sqlglot import exp

from runner.lint.base import ERROR, Rule, Violation
from runner.lint.context import ModelContext, ParsedStatement
from runner.lint.expressions import conjuncts, table_key
from runner.specs.target import split_table_name


def _target(context: ModelContext) -> str:
    model = context.model
    return ".".join(split_table_name(model.target_table)).lower() if model else ""


def _written_table(node: exp.Expr | None) -> str:
    """The table a statement writes (MERGE, INSERT, UPDATE, DELETE, CREATE TABLE), or ''."""
    if isinstance(node, exp.Create) and str(node.args.get("kind", "")).upper() != "TABLE":
        return ""  # a view
    if isinstance(node, (exp.Merge, exp.Insert, exp.Update, exp.Delete, exp.Create)):
        table = node.this
        if isinstance(table, exp.Schema):
            table = table.this
        return _full_name(table) if isinstance(table, exp.Table) else ""
    return ""


def _full_name(table: exp.Table) -> str:
    key = table_key(table)
    return key if "." in key else f"default.{key}"


def _batch_statements(context: ModelContext) -> list[ParsedStatement]:
    return [p for statements in context.batches.values() for p in statements]


class TargetReplacedPerBatch(Rule):
    """A statement replaces or overwrites the model's target, every micro-batch.

    `INSERT OVERWRITE {{ this }}`, `CREATE OR REPLACE TABLE {{ this }}` or `DROP TABLE
    {{ this }}` in a model runs once per micro-batch: each batch throws away what the earlier
    ones wrote, and the target holds only the last batch. Spark runs it without complaint. Write
    the batch's rows with `MERGE` on the `unique_key` (or `merge()`), or `INSERT INTO` for an
    append-only target.
    """

    code = "DL030"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        model = context.model
        if model is None:
            return []
        target = _target(context)
        found = []
        for parsed in _batch_statements(context):
            node = parsed.expression
            if isinstance(node, exp.Insert) and node.args.get("overwrite"):
                verb = "INSERT OVERWRITE"
            elif isinstance(node, exp.Create) and node.args.get("replace"):
                verb = "CREATE OR REPLACE"
            elif isinstance(node, exp.Drop) and str(node.args.get("kind", "")).upper() == "TABLE":
                verb = "DROP TABLE"
                if not isinstance(node.this, exp.Table) or _full_name(node.this) != target:
                    continue
            else:
                continue
            if verb != "DROP TABLE" and _written_table(node) != target:
                continue
            message = (
                f"{verb} of the target {model.target_table} runs every micro-batch: each "
                "batch replaces what the earlier ones wrote, and the target keeps only the last "
                "batch; MERGE the batch into it instead"
            )
            where = context.locate_line(parsed.statement.line, verb.split()[0])
            found.append(self.violation(context, where, message))
        return found


class AppendIntoKeyedTarget(Rule):
    """`INSERT INTO` the target of a model that has a `unique_key`.

    A target with a `unique_key` holds one row per key. `INSERT INTO` appends every event of
    every batch: a second event for a key, or a batch replayed after a failure, adds a second
    row. Spark runs it without complaint. Upsert with `MERGE ... ON` the key (or `merge()`),
    or drop `unique_key` from the config if the target is an append-only log.
    """

    code = "DL031"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        model = context.model
        if model is None or not model.config.unique_keys:
            return []
        target = _target(context)
        found = []
        for parsed in _batch_statements(context):
            node = parsed.expression
            if not isinstance(node, exp.Insert) or node.args.get("overwrite"):
                continue
            if _written_table(node) != target:
                continue
            keys = ", ".join(model.config.unique_keys)
            message = (
                f"INSERT INTO {model.target_table}, whose unique_key is {keys}: every event is "
                "appended, so a key seen twice (or a replayed batch) gets a second row; MERGE on "
                "the key instead"
            )
            where = context.locate_line(parsed.statement.line, "INSERT")
            found.append(self.violation(context, where, message))
        return found


class DedupeKeepsOldest(Rule):
    """A dedupe keeps the oldest event of a key, not the latest by the model's `sequence_by`.

    `ROW_NUMBER() OVER (PARTITION BY <key> ORDER BY <sequence_by>)` numbers a key's events
    oldest first, so keeping row 1 keeps the oldest, and the MERGE writes a stale row. Spark runs
    it without complaint. Order by `<sequence_by> DESC` (with `dedupe()`:
    `order_by='<sequence_by> DESC'`).
    """

    code = "DL032"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        model = context.model
        sequence_by = model.config.sequence_by if model else None
        if model is None or not isinstance(sequence_by, str):
            return []  # none, or a list (ordered as a struct): not checked
        sequence = sequence_by.lower()
        found = []
        for parsed in _batch_statements(context):
            kept = _kept_first_rows(parsed)
            for window in kept:
                order = window.args.get("order")
                first = order.expressions[0] if order is not None and order.expressions else None
                if not isinstance(first, exp.Ordered) or first.args.get("desc"):
                    continue
                if not isinstance(first.this, exp.Column) or first.this.name.lower() != sequence:
                    continue
                message = (
                    f"ROW_NUMBER() ... ORDER BY {first.this.sql(dialect='spark')} keeps row 1, the "
                    f"oldest event of each key by sequence_by ({model.config.sequence_by}); order "
                    "by it DESC to keep the latest"
                )
                found.append(self.violation(context, context.locate_node(parsed, first), message))
        return found


def _kept_first_rows(parsed: ParsedStatement) -> list[exp.Window]:
    """ROW_NUMBER windows of the statement whose row 1 is kept (``rn = 1`` in a WHERE or
    QUALIFY, the window inline or by its alias), outside a UNION's branches."""
    windows = {
        alias.alias.lower(): alias.this
        for alias in parsed.nodes
        if isinstance(alias, exp.Alias)
        and isinstance(alias.this, exp.Window)
        and isinstance(alias.this.this, exp.RowNumber)
    }
    kept = []
    for clause in parsed.nodes:
        if not isinstance(clause, (exp.Where, exp.Qualify)):
            continue
        if clause.find_ancestor(exp.SetOperation) is not None:
            continue  # one branch of a UNION (scd2()'s first version of a key), not a dedupe
        for term in conjuncts(clause.this):
            if not isinstance(term, (exp.EQ, exp.LTE)):
                continue
            for side, other in ((term.left, term.right), (term.right, term.left)):
                if not (isinstance(other, exp.Literal) and other.name == "1"):
                    continue
                window = windows.get(side.name.lower()) if isinstance(side, exp.Column) else side
                if isinstance(window, exp.Window) and isinstance(window.this, exp.RowNumber):
                    kept.append(window)
    return kept


class ChangeFeedPreimageNotHandled(Rule):
    """The model reads a Change Data Feed but never looks at `_change_type`.

    A Change Data Feed has a row per insert and delete, and two per update: the row before
    (`update_preimage`) and after (`update_postimage`). A model that treats every row as an
    event counts each update twice and applies the old values as if they were new. Spark runs
    it without complaint. Filter (`WHERE _change_type != 'update_preimage'`) or use
    `_change_type` (e.g. subtract pre-images, as the example's `customer_totals` does).
    """

    code = "DL033"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        model = context.model
        if model is None or not context.batches:
            return []
        stream = context.project.streams.get(model.config.stream or "")
        reads_feed = bool(stream is not None and stream.change_data_feed)
        calls = [
            (parsed, call)
            for parsed, call in context.expressions(exp.Anonymous)
            if call.name.lower() == "table_changes"
        ]
        if not reads_feed and not calls:
            return []
        statements = _batch_statements(context)
        if any(
            isinstance(n, exp.Column) and n.name.lower() == "_change_type"
            for p in statements
            for n in p.nodes
        ) or any("_change_type" in p.sql.lower() for p in statements):
            return []
        if calls:
            where = context.locate_node(*calls[0])
        else:
            stream_name = model.config.stream or ""
            where = context.locate_line(context.scan.config_line("stream") or 1, stream_name)
        message = (
            "reads a Change Data Feed but never uses _change_type: each update arrives as an "
            "update_preimage and an update_postimage row, so it is counted twice and the old "
            "values are applied as new; filter out update_preimage rows or use _change_type"
        )
        return [self.violation(context, where, message)]


class TargetNeverWritten(Rule):
    """The model's statements never write its target.

    Every micro-batch runs the model, and its statements write a table (`MERGE`, `INSERT`,
    `UPDATE`, `DELETE`), but never the target: the stream's checkpoint moves on and the target
    never sees the events. Usually a statement names a hard-coded table instead of
    `{{ this }}`. (A model whose statements only read, such as a lone `SELECT`, is left alone.)
    """

    code = "DL034"
    severity = ERROR

    def check(self, context: ModelContext) -> list[Violation]:
        model = context.model
        if model is None or not context.batches:
            return []
        target = _target(context)
        statements = _batch_statements(context)
        if any(p.expression is None or isinstance(p.expression, exp.Command) for p in statements):
            return []  # a statement the linter cannot read may be the write
        written = {_written_table(p.expression) for p in statements} - {""}
        if not written or target in written:
            return []
        line = context.scan.config_line("target") or model.config_line
        message = (
            f"the statements write {', '.join(sorted(written))} but never the target "
            f"{model.target_table}: the stream's checkpoint "
            "moves past each batch and its events are lost; write it with MERGE INTO {{ this }} "
            "(or a macro such as merge())"
        )
        return [self.violation(context, context.locate_line(line), message)]
