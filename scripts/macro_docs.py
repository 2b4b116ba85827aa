"""Write docs/macros/<macro>.md: each built-in macro's reference, an example model and the SQL
it really compiles to (rendered here through the runner's own compile path); and
docs/expectations.md, each expectation action with the SQL `runner compile` shows for it.

    .venv/bin/python scripts/macro_docs.py          # rewrite the pages
    tests/unit/test_macros.py                       # fails when a page is stale
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runner import project as project_loader  # noqa: E402
from runner.artifacts import render_expectations  # noqa: E402
from runner.model_sql import compile_batch, compile_setup  # noqa: E402
from runner.project import Project  # noqa: E402
from runner.specs.model import ModelSpec  # noqa: E402
from runner.templating.batch_facts import BatchFacts, ColumnStats  # noqa: E402

STREAM = (
    "streams:\n  orders:\n    format: json\n    path: landing/orders\n"
    '    schema: "order_id STRING, customer_id STRING, status STRING, amount DECIMAL(10,2), '
    'updated_at TIMESTAMP, op STRING"\n'
)
ORDER_COLUMNS = (
    "order_id STRING, customer_id STRING, status STRING, amount DECIMAL(10,2), updated_at TIMESTAMP"
)

# name -> (model file, what to show, prose above the example, prose below it)
PAGES: dict[str, dict[str, str]] = {
    "dedupe": {
        "model": (
            "{{ config(stream='orders', target='silver.orders', unique_key='order_id') }}\n"
            "CREATE OR REPLACE TEMPORARY VIEW orders_latest AS\n"
            "{{ dedupe(batch, key='order_id', order_by='updated_at DESC') }};\n"
        ),
        "show": "batch",
        "intro": (
            "One row per key: the first by `order_by`. Rows that `order_by` ranks equal are "
            "ordered by every other kept column (or by `tie_break`), so a batch always keeps "
            'the same row, on every replay. A MERGE reading it never fails with "multiple '
            'source rows matched".'
        ),
    },
    "merge": {
        "model": (
            "{{ config(stream='orders', target='silver.orders', unique_key='order_id',\n"
            "          sequence_by='updated_at', prune_by=['order_id'],\n"
            f"          columns='{ORDER_COLUMNS}, is_deleted BOOLEAN') }}}}\n"
            "{{ merge(delete_column='op', deletes='tombstone') }};\n"
        ),
        "show": "batch+facts",
        "intro": (
            "A sequence-guarded upsert of the micro-batch into the model's target, with its own "
            "dedupe (newest row per key, deterministic ties). It reads `unique_key`, "
            "`sequence_by`, `prune_by` and `schema_drift` from `config()`, so a model can be "
            "`{{ config(...) }} {{ merge(delete_column='op') }}`. SET and INSERT lists are the "
            "target's columns that the batch has (at run time, the table's real columns).\n\n"
            "**Out of order.** A matched row changes only when `s.<sequence_by> > "
            "t.<sequence_by>`, for updates and deletes alike. With `deletes='hard'` (default) a "
            "deleted key has no row left to compare with, so an event older than the delete "
            "that arrives after it inserts the key again. With `deletes='tombstone'` the delete "
            "keeps the row with `is_deleted = true` and the delete's sequence value; older "
            "events then lose against it, and a newer one revives the key. Hide tombstones from "
            "readers with a view: `CREATE VIEW silver.orders_live AS SELECT * FROM silver.orders "
            "WHERE NOT is_deleted`.\n\n"
            "**The same events, the same table.** Given `sequence_by`, the target after a set "
            "of events is the same however they are cut into micro-batches (one batch, one "
            "batch per event, any split; redeliveries included) and, with the exceptions "
            "below, in whatever order they arrive: a key's events act as if applied one at a "
            "time in sequence order, and an event not newer than its key's row is ignored. "
            "`scd2()` keeps the same rule for its history rows (docs/macros/scd2.md). "
            "Three options keep it only while each key's events arrive in sequence order, "
            "because the target keeps no memory of what a late event would have changed: hard "
            "deletes (an event older than a delete that arrives after it inserts the key "
            "again; tombstones do not), `truncate_when` (an event older than a truncate that "
            "arrives after it is applied) and `ignore_null_updates` (a late event is ignored "
            "whole, even a value that a newer event left NULL). Two different events of one "
            "key with equal sequence values are decided by the tie-break within a batch, but "
            "across batches the first one applied stays: when that can happen, make the "
            "sequence unique per key (`sequence_by=['updated_at', 'version']`). "
            "`tests/spark/test_batch_invariance.py` holds every option to this rule on real "
            "Delta, against a Python oracle that applies events one at a time.\n\n"
            "**Modes.** `mode='insert_only'` (only new keys; Delta runs an insert-only MERGE), "
            "`mode='update_only'` (only known keys). `update_columns=[...]` / "
            "`exclude_columns=[...]` choose what an update writes (the sequence column is always "
            "written, keys never). `null_safe=true` matches keys with `<=>`. "
            "`match_condition='t.region = s.region'` is ANDed into ON. The modes, "
            "`update_columns` and `exclude_columns` keep the values of the event that "
            "inserted a row, so they break the rule above (two events of a new key in one "
            "batch insert the newer, in two batches the older): lint rejects them (DL022) "
            "unless the model says it accepts that (`-- noqa: DL022`).\n\n"
            "**Schema evolution.** With `config(schema_drift='evolve')` the statement is "
            "`MERGE WITH SCHEMA EVOLUTION ... UPDATE SET * / INSERT *` over a source without "
            "the delete column (and without `exclude_columns`), so new batch columns are added "
            "to the target. Hard deletes cannot be combined with it (the delete column would be "
            "added); use tombstones.\n\n"
            "**Pruning (`prune_by`).** For each column in `config(prune_by=[...])` the runner "
            "measures the batch (min, max, NULLs; distinct values for a partition column) before "
            "rendering and adds a literal predicate on the target to ON. Delta pushes literal "
            "predicates on the target into its file scan, so it only reads (and can only "
            "rewrite) files whose min/max statistics overlap the batch; a subquery in ON would "
            "not prune. It helps when the target's files are laid out by that column (increasing "
            "ids or times, a partition column, Z-order or liquid clustering on it) and a batch "
            "covers a narrow range of it. It does not help when every batch spans the whole key "
            "space (random UUID keys): the range then covers every file. Prune only on the key "
            "or on a column whose value never changes for a key (a partition date fixed per "
            "order), or a matching row outside the range is missed and inserted twice. "
            "`runner compile` shows the predicate with `:column__min`-style markers; at run "
            "time they are literals, as in the second listing.\n\n"
            "**Its parts.** `merge()` resolves its arguments (`incremental_arguments`, shared "
            "with `scd2()`), checks them all in `validate_merge` "
            "(runner/macros/merge_validate.sql) before any SQL is generated, and builds the "
            "statement from small macros: `merge_using`, `merge_on`, `merge_when_matched`, "
            "`merge_when_not_matched` (and `merge_truncate`, `merge_rows_after_truncate`, "
            "`merge_folded_source` for `truncate_when` and `ignore_null_updates`). A project "
            "macro of the same name replaces one part, as for any built-in macro."
        ),
    },
    "scd2": {
        "model": (
            "{{ config(stream='orders', target='silver.orders_history', unique_key='order_id',\n"
            "          sequence_by='updated_at', prune_by=['order_id'],\n"
            f"          columns='{ORDER_COLUMNS}, valid_from TIMESTAMP, valid_to TIMESTAMP, "
            "is_current BOOLEAN, is_deleted BOOLEAN') }}\n"
            "{{ scd2(delete_column='op') }}  -- noqa: DL003 (only the close rows can match)\n;\n"
        ),
        "show": "batch",
        "intro": (
            "Slowly changing dimension type 2 in one MERGE per batch: the key's current row is "
            "closed (`valid_to` = the first new version's sequence value, `is_current = false`) "
            "and every new version in the batch is inserted, valid until the next one, so "
            "several changes of a key in one batch are applied in order. A version that "
            "arrives late is put at its place in the key's history: the version before it now "
            "ends where the late one starts, and the late one ends where the next begins. So "
            "the history does not depend on how the events fall into batches nor on the order "
            "they arrive in (the rule of docs/macros/merge.md); a redelivered version is no "
            "new version. A delete is a version with `is_deleted = true`; it closes the "
            "version before it, and a late event older than it cannot resurrect the key. Keys "
            "and sequence values must not be NULL. "
            "Being one MERGE, a batch is applied atomically and, under the runner's "
            "idempotent-write identity, exactly once.\n\n"
            "The linter's DL003 cannot prove that only one source row per key can match (the "
            "staged source holds a close row and insert rows per key); the `-- noqa: DL003` on "
            "the macro's line says so."
        ),
    },
    "optimize": {
        "model": (
            "{{ config(stream='orders', target='silver.orders', partitioned_by=['status']) }}\n"
            "{{ optimize(every=10, zorder_by=['customer_id'], where=\"status = 'open'\") }};\n"
        ),
        "show": "batch9",
        "intro": (
            "Compacts small files (Z-ordering by `zorder_by`). `every=N` renders it only after "
            "every N-th batch (ids count from 0, so batch 9 for N=10); `where` limits it to "
            "partitions (Delta accepts only partition columns there). "
            "`config(optimize_every=N, zorder_by=[...])` makes the runner append it by itself. "
            "On a liquid-clustered target (`cluster_by`), `OPTIMIZE` clusters and `zorder_by` "
            "is an error."
        ),
    },
    "create_target": {
        "model": (
            "{{ config(stream='orders', target='silver.orders', unique_key='order_id',\n"
            f"          columns='{ORDER_COLUMNS}', cluster_by=['customer_id'],\n"
            "          table_properties={'delta.enableChangeDataFeed': true,\n"
            "                            'delta.enableDeletionVectors': true,\n"
            "                            'delta.autoOptimize.autoCompact': true,\n"
            "                            'delta.logRetentionDuration': 'interval 30 days',\n"
            "                            'delta.deletedFileRetentionDuration': 'interval 7 days'}"
            ") }}\n"
            "SELECT 1;\n"
        ),
        "show": "setup",
        "intro": (
            "The target's DDL, run once when a query starts and no Delta table is at the "
            "target's location: columns from `config(columns=...)` or else the stream's schema, "
            "`PARTITIONED BY` from `partitioned_by` or `CLUSTER BY` (liquid clustering, Delta "
            "4.4) from `cluster_by` (not both), and `table_properties`. Useful properties: "
            "`delta.enableChangeDataFeed` (downstream streams read the changes), "
            "`delta.enableDeletionVectors` (MERGE marks rows deleted instead of rewriting "
            "files), `delta.autoOptimize.autoCompact` (compact small files after writes), "
            "`delta.logRetentionDuration` / `delta.deletedFileRetentionDuration` (history "
            "and VACUUM retention). An existing target gets missing properties with "
            "`set_table_properties`; `attach_target` registers it under its name."
        ),
    },
}

ORDERS_CONFIG = (
    "{{ config(stream='orders', target='silver.orders', unique_key='order_id',\n"
    "          sequence_by=%s,\n"
    f"          columns='{ORDER_COLUMNS}%s') }}}}\n"
)
HISTORY_COLUMNS = (
    ", valid_from TIMESTAMP, valid_to TIMESTAMP, is_current BOOLEAN, is_deleted BOOLEAN"
)
# name -> [(section title, prose, model)]: one more compiled example per option
OPTIONS: dict[str, list[tuple[str, str, str]]] = {
    "merge": [
        (
            "A sequence of several columns",
            "`sequence_by=['updated_at', 'amount']` (in `config()` or the call) compares as a "
            "struct: `amount` decides between two events of one `updated_at`, for the guard "
            "and for the batch's dedupe alike. Both are written on update.",
            ORDERS_CONFIG % ("['updated_at', 'amount']", "") + "{{ merge(delete_column='op') }};\n",
        ),
        (
            "`truncate_when=`",
            "A condition on batch rows. When a row of the batch matches it, a first statement "
            "empties the target (its own MERGE, so its own idempotent-write identity: a "
            "replayed batch does not truncate twice, nor skip the truncate if it had not "
            "committed). The upsert then reads only the batch's rows newer than the newest "
            "truncate row; the truncate rows themselves are never written. An event older than "
            "the truncate that arrives in a later batch is inserted again (nothing is left to "
            "compare it with, as with hard deletes).",
            ORDERS_CONFIG % ("'updated_at'", "")
            + "{{ merge(delete_column='op', truncate_when=\"op = 'T'\") }};\n",
        ),
        (
            "`except_columns=`",
            "Columns of the batch that are never copied to the target, neither inserted nor "
            "updated, even when the target has a column of that name (a payload you keep "
            "elsewhere, a PII field). Keys and sequence columns cannot be listed.",
            ORDERS_CONFIG % ("'updated_at'", "") + "{{ merge(except_columns=['customer_id']) }};\n",
        ),
        (
            "`ignore_null_updates=true` (partial updates)",
            "A NULL in the source keeps the target's value. The batch's events of a key are "
            "folded into one row, as if they had come one per batch in sequence order: only "
            "events newer than the key's target row count (a late event is ignored, as it "
            "would be alone), each column takes its newest non-NULL value, and a delete "
            "forgets everything before it, the target's values included. When the newest event "
            "is a delete, the tombstone holds that event's own values; a revival starts from "
            "nothing, as a new key would. The fold reads the target (a join on the key, pruned "
            "by `prune_by`) to know each key's row. Events must arrive in sequence order for "
            "the rule above to hold (see *The same events, the same table*).",
            ORDERS_CONFIG % ("'updated_at'", ", is_deleted BOOLEAN")
            + "{{ merge(delete_column='op', deletes='tombstone', ignore_null_updates=true) }};\n",
        ),
    ],
    "scd2": [
        (
            "`track_history_on=[...]` / `track_history_except=[...]`",
            "Only a change of the listed columns (or of all but the listed ones, with "
            "`_except`) makes a new version. An event that changes only other columns updates "
            "the key's current row in place (its values and its sequence column; `valid_from` "
            "stays), so no new version. A delete, a revival after a delete and a new key always "
            "make a version. Within a batch, an untracked change after a new version is folded "
            "into that version. Tracking keeps the rule of docs/macros/merge.md only while "
            "each key's events arrive in sequence order: an event not newer than the key's "
            "current version is ignored, since an in-place update leaves no trace of the "
            "events it folded.",
            ORDERS_CONFIG % ("'updated_at'", HISTORY_COLUMNS)
            + "{{ scd2(delete_column='op', track_history_on=['status']) }}  -- noqa: DL003\n;\n",
        ),
    ],
}

FACTS = BatchFacts(
    columns=("order_id", "customer_id", "status", "amount", "updated_at", "op"),
    target_columns=(
        "order_id", "customer_id", "status", "amount", "updated_at", "is_deleted",
    ),
    stats={"order_id": ColumnStats(min="o1041", max="o1187", null_count=0)},
)  # fmt: skip


def macro_header(name: str) -> str:
    """The doc comment at the top of the macro's file."""
    text = (REPO / "runner" / "macros" / f"{name}.sql").read_text()
    match = re.match(r"\{#-?(.*?)-?#\}", text, re.S)
    return match.group(1).strip("\n") if match else ""


def compiled_options(name: str) -> list[str]:
    """One section per option of ``name``: its prose, the model and the SQL it compiles to."""
    parts = []
    for title, prose, model_text in OPTIONS.get(name, []):
        with tempfile.TemporaryDirectory() as tmp:
            project, model = load_example(Path(tmp), model_text)
            sql = ";\n\n".join(s.sql for s in compile_batch(project, model, 0))
        parts += [f"### {title}\n", prose + "\n", "```sql\n" + model_text + "```\n"]
        parts += ["Compiled, `runner compile`:\n", "```sql\n" + sql + "\n```\n"]
    return ["## Options\n", *parts] if parts else []


SAME_EVENTS = REPO / "docs" / "examples" / "same_events"
# name -> (section title, prose, the example's model)
WORKED_EXAMPLES: dict[str, tuple[str, str, str]] = {
    "merge": (
        "The rule, in two cases",
        "Two cases where folding the events of one batch could break the rule, as unit tests "
        "(docs/testing.md) of a model with `ignore_null_updates=true`: a late event inside a "
        "batch is ignored, as it would be alone, and a delete inside a batch forgets the row, "
        "as it does across batches. The project is `docs/examples/same_events/`; the suite "
        "runs its unit tests.",
        "orders_partial",
    ),
    "scd2": (
        "A late version",
        "The same three events give the same history whether the late one comes in a batch "
        "of its own or with the others. The project is `docs/examples/same_events/`; the "
        "suite runs its unit tests.",
        "orders_history",
    ),
}


def worked_example(name: str) -> list[str]:
    """The section that shows the rule on the example project: the model, its unit tests and
    what `runner test` printed for them (captured in runner-test-<model>.txt)."""
    if name not in WORKED_EXAMPLES:
        return []
    title, prose, model = WORKED_EXAMPLES[name]
    output = (SAME_EVENTS / f"runner-test-{model}.txt").read_text()
    return [
        f"## {title}\n",
        prose + "\n",
        f"`models/{model}.sql`:\n",
        "```sql\n" + (SAME_EVENTS / "models" / f"{model}.sql").read_text() + "```\n",
        f"`models/{model}.yml`:\n",
        "```yaml\n" + (SAME_EVENTS / "models" / f"{model}.yml").read_text() + "```\n",
        f"```\n$ runner test -s {model}\n" + output + "```\n",
    ]


def load_example(root: Path, model_text: str) -> tuple[Project, ModelSpec]:
    """The one-model docs project in ``root``."""
    (root / "project.yml").write_text(
        "name: docs\ntargets:\n  local:\n    master: local[1]\n"
        "    warehouse: target/warehouse\n    checkpoints: target/checkpoints\n"
    )
    (root / "streams").mkdir()
    (root / "streams" / "orders.yml").write_text(STREAM)
    (root / "models").mkdir()
    (root / "models" / "example.sql").write_text(model_text)
    project = project_loader.load(root)
    return project, project.model("example")


def render_page(name: str, page: dict[str, str]) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "project.yml").write_text(
            "name: docs\ntargets:\n  local:\n    master: local[1]\n"
            "    warehouse: target/warehouse\n    checkpoints: target/checkpoints\n"
        )
        (root / "streams").mkdir()
        (root / "streams" / "orders.yml").write_text(STREAM)
        (root / "models").mkdir()
        (root / "models" / "example.sql").write_text(page["model"])
        project = project_loader.load(root)
        model = project.model("example")
        listings = []
        if page["show"] == "setup":
            setup = compile_setup(project, model, location_root=root)
            listings.append(("`runner compile` (set-up)", setup.create.sql))
        elif page["show"] == "batch9":
            sql = "\n".join(s.sql for s in compile_batch(project, model, 9))
            listings.append(("`runner compile --batch-id 9`", sql))
            quiet = compile_batch(project, model, 0)
            listings.append(("batch 0 (no statement)", "\n".join(s.sql for s in quiet)))
        else:
            listings.append(("`runner compile`", compile_batch(project, model, 0)[0].sql))
            if page["show"] == "batch+facts":
                sql = compile_batch(project, model, 0, FACTS)[0].sql
                listings.append(("at run time, for a batch of orders o1041 .. o1187", sql))
    parts = [
        f"# `{name}`\n",
        page["intro"] + "\n",
        "## Reference\n",
        "```text\n" + macro_header(name) + "\n```\n",
        "## Example\n",
        "`models/example.sql`:\n",
        "```sql\n" + page["model"] + "```\n",
    ]
    for title, sql in listings:
        parts.append(f"Compiled, {title}:\n")
        parts.append("```sql\n" + sql + "\n```\n")
    parts += compiled_options(name)
    parts += worked_example(name)
    parts.append(
        "_Generated by `scripts/macro_docs.py` from the macro and the runner's compile path; "
        "`tests/unit/test_macros.py` checks it is current._\n"
    )
    return "\n".join(parts)


EXPECTATIONS_INTRO = """\
Row expectations are named SQL conditions in `config()`, each with what to do with a row that
does not meet it. A row meets a condition only when it is true: false and NULL both fail it.

```sql
{{ config(stream='orders', target='silver.orders', unique_key='order_id', sequence_by='updated_at',
          expectations={
            'has_customer': 'customer_id IS NOT NULL',                                  -- warn
            'amount_positive': {'expect': "op = 'D' OR amount > 0", 'on_violation': 'quarantine'},
            'has_key': {'expect': 'order_id IS NOT NULL', 'on_violation': 'fail'},
          }) }}
```

| `on_violation` | the row | the batch |
| --- | --- | --- |
| `warn` (default) | applied | counted |
| `drop` | left out of the batch view the model reads | counted |
| `quarantine` | left out, and written to `quarantine.<model>` | counted |
| `fail` | | stops before any write |

Conditions are checked on every row of the batch, deletes included (write `op = 'D' OR ...` to
let deletes through), after the source's own checks (a file line that is not JSON is
quarantined by the source and never reaches them). A condition that does not parse is an error
at the `expectations=` line when the project loads; one that names a missing column fails the
batch at that line.

The checks are SQL, run on the batch's session before the model's statements; `runner compile`
writes them to `target/compiled/<model>.sql` in an `EXPECTATIONS` section, and the runner runs
those statements, built over the batch's real columns: the batch arrives as `<model>__input`,
`<model>__checked` adds each row's failed expectation names, one aggregate counts each
expectation's failing rows, and `<model>__batch` (`{{ batch }}` in the model) holds the rows the
model may apply.

Each batch's counts (passed and failed rows per expectation) are in the progress line (`6 rows
in, 2 quarantined (expectations failed: has_customer 1 warn, amount_positive 2 quarantine)`),
in the event log's `expectations` column (`ARRAY<STRUCT<name, action, passed, failed>>`) and in
the `expectations` column of `runner history` (`has_customer 1/6 warn amount_positive 2/6
quarantine`, or `3 passed`); a real run is below. The batch's `quarantined` and
`dropped` counts (progress line, event log, `runner history`'s `quar` and `drop`) are rows: a
row failing two `quarantine` expectations is one row quarantined, and a row failing a `drop`
and a `quarantine` expectation is quarantined, not dropped.

{real_run}

`tests/spark/test_expectations.py` checks `warn`, `drop` and `quarantine` against a Python
oracle on real Delta (and a replayed batch), `fail` stopping before any write, and `runner
history`'s counts; `tests/spark/test_crash_recovery.py` SIGKILLs a stream whose model
quarantines rows and checks the quarantine and the target are exact afterwards.
"""
# A real run of the example with two bad events added, captured from the terminal
REAL_RUN = (
    "A real run: the example, with two bad events added to its last file, and the expectations\n"
    "above (seconds from a machine busy with other work):\n\n"
    "```\n" + (Path(__file__).parent / "expectations_run.txt").read_text() + "```\n\n"
    "`SELECT * FROM quarantine.orders_merge WHERE source = 'expectation'` shows the two rows,\n"
    "each with `reason` `failed expectation(s): has_customer, amount_positive` or\n"
    "`failed expectation(s): amount_positive` and the row as JSON."
)
EXPECTATIONS_MODEL = (
    "{{ config(stream='orders', target='silver.orders', unique_key='order_id',\n"
    "          sequence_by='updated_at',\n"
    f"          columns='{ORDER_COLUMNS}',\n"
    "          expectations={%s}) }}\n"
    "{{ merge(delete_column='op') }};\n"
)
# (section title, prose, the expectations= dict's text)
EXPECTATION_ACTIONS = [
    (
        "`warn` (the default)",
        "The row is applied; each batch counts it. No row is left out, so the batch view is "
        "every row of the batch.",
        "'has_customer': 'customer_id IS NOT NULL'",
    ),
    (
        "`drop`",
        "The row is left out of the batch view the model reads, and counted; nothing else "
        "keeps it.",
        "'known_status': {'expect': \"status IN ('created', 'paid', 'shipped')\", "
        "'on_violation': 'drop'}",
    ),
    (
        "`quarantine`",
        "The row is left out of the batch view and appended to the model's quarantine table "
        "`quarantine.<model>` (at `<warehouse>/_quarantine/<model>`, the table the file and "
        "Kafka sources quarantine malformed input to): `source` = `expectation`, `batch_id`, "
        "`position` (the stream, the batch and the row's `unique_key`: `stream orders, batch "
        "7, order_id=o12`), `raw` (the row as JSON, NULL fields left out) and `reason` "
        "(`failed expectation(s): ` and every expectation the row fails, `warn` ones too); "
        "`file` and `line` stay NULL (they locate lines a file source could not read, `source` "
        "= `json` / `csv`). The write runs before the model's statements under its own "
        "idempotent-write identity, so a batch replayed after a crash neither loses nor "
        "duplicates quarantined rows.",
        "'amount_positive': {'expect': \"op = 'D' OR amount > 0\", 'on_violation': 'quarantine'}",
    ),
    (
        "`fail`",
        "When a row fails, the batch stops after the counts: before the quarantine write and "
        "before any statement of the model, so nothing of the batch is written and the "
        "checkpoint does not move on; it runs again on the next start. The error names the "
        "expectation, its condition, the count and the first failing rows, and points at the "
        "`expectations=` line. Its real output, on a file whose second event has no "
        "`order_id`:\n\n"
        "```\n"
        "$ runner run -m orders_merge\n"
        "orders_merge: orders -> silver.orders (target local, local[1])\n"
        "error: models/orders_merge.sql:4: expectation 'has_key' (order_id IS NOT NULL) failed "
        "for 1 of 3 rows of batch 0 of model 'orders_merge'; the batch stopped before any "
        "write\n"
        "first 1 failing rows:\n"
        "    order_id=None, customer_id='c2', status='paid', amount=Decimal('2.00'), "
        "updated_at=datetime.datetime(2024, 1, 1, 10, 1), op='U', _rescued_data=None\n"
        "hint: fix the input or the condition (or make it on_violation='quarantine'); the "
        "batch runs again on the next start\n"
        "```",
        "'has_key': {'expect': 'order_id IS NOT NULL', 'on_violation': 'fail'}",
    ),
]


def render_expectations_page() -> str:
    """docs/expectations.md: the actions, each with a model and its compiled EXPECTATIONS."""
    parts = ["# Expectations\n", EXPECTATIONS_INTRO.replace("{real_run}", REAL_RUN)]
    for title, prose, declared in EXPECTATION_ACTIONS:
        model_text = EXPECTATIONS_MODEL % declared
        with tempfile.TemporaryDirectory() as tmp:
            project, model = load_example(Path(tmp), model_text)
            compiled = "\n".join(render_expectations(project, model, 0)).strip("\n")
        parts += [f"## {title}\n", prose + "\n", "```sql\n" + model_text + "```\n"]
        parts += ["Compiled, `runner compile` (its EXPECTATIONS section):\n"]
        parts += ["```sql\n" + compiled + "\n```\n"]
    parts.append(
        "_Generated by `scripts/macro_docs.py` from the runner's compile path; "
        "`tests/unit/test_macros.py` checks it is current._\n"
    )
    return "\n".join(parts)


def pages() -> dict[Path, str]:
    macro_pages = {
        REPO / "docs" / "macros" / f"{n}.md": render_page(n, p) for n, p in PAGES.items()
    }
    return {**macro_pages, REPO / "docs" / "expectations.md": render_expectations_page()}


if __name__ == "__main__":
    for path, text in pages().items():
        path.write_text(text)
        print(f"wrote {path.relative_to(REPO)}")
