"""``runner init [DIR]``: a minimal project that loads, lints clean, compiles and runs.

The files are plain text below, written as they are (no templating), so what a user reads
here is what they get. Pure Python.
"""

from __future__ import annotations

from pathlib import Path

from runner.errors import ConfigError

PROJECT_YML = """\
# The project: `runner` reads this file first. Required: name. Everything else has a default.
name: {name}                 # required: the project's name (outputs, the docs site)

default_target: local        # used without --target (default: local, or the only target)
targets:                     # where models run; with no targets: a `local` one like this
  local:
    master: local[*]         # local[*] or spark://HOST:PORT; or remote: sc://HOST:PORT
    warehouse: target/local/warehouse      # tables: <warehouse>/<schema>/<table>
    checkpoints: target/local/checkpoints  # one checkpoint per model: <checkpoints>/<model>
    spark_conf:              # any Spark setting
      spark.sql.shuffle.partitions: 2

vars:                        # var('name') in models; override: --vars '{{delete_op: X}}'
  delete_op: D

# paths: {{models: models, macros: macros, streams: streams, seeds: seeds, tests: tests}}
# clean-targets: [target/compiled, target/docs]   # what `runner clean` removes (the default)
"""

STREAM_YML = """\
# A streaming source: each new file under `path` becomes (part of) a micro-batch.
streams:
  events:
    description: Change events of items; op D deletes the item.
    format: json                  # json | csv | parquet | delta | kafka | rate
    path: data/events             # relative to the project; drop new JSON-lines files here
    schema: "item_id STRING, name STRING, price DECIMAL(10,2), updated_at TIMESTAMP, op STRING"
    options:
      maxFilesPerTrigger: 1       # one file per micro-batch
    trigger:                      # `runner stream` drains what is there, then stops;
      available_now: true         # processing_time: 10 seconds keeps polling
"""

MODEL_SQL = """\
{{ config(
    stream='events',
    target='silver.items',
    unique_key='item_id',
    sequence_by='updated_at',
    columns='item_id STRING, name STRING, price DECIMAL(10,2), updated_at TIMESTAMP',
) }}

-- The latest version of each item: newer events update it, older ones are ignored,
-- op = 'D' deletes it (the merge() macro writes the MERGE; `runner compile` shows it).
{{ merge(delete_column='op', delete_values=[var('delete_op')]) }}
"""

SCHEMA_YML = """\
# Descriptions and data tests of the models' target tables, and model unit tests.
models:
  items:
    description: One row per item, its latest version.
    columns:
      item_id:
        description: The item's key.
        tests: [unique, not_null]

unit_tests:
  items_keeps_the_newest_version:
    model: items
    description: a late, older event does not overwrite a newer one; a delete removes the row
    batches:
      - - {item_id: i1, name: pen, price: 1.50, updated_at: "2024-01-01 10:00:00", op: U}
        - {item_id: i2, name: ink, price: 4.00, updated_at: "2024-01-01 10:00:00", op: U}
      - - {item_id: i1, name: pen, price: 9.99, updated_at: "2024-01-01 09:00:00", op: U}
        - {item_id: i2, name: ink, price: 4.00, updated_at: "2024-01-01 11:00:00", op: D}
    expect:
      - {item_id: i1, price: 1.50}
"""

SAMPLE_EVENTS = """\
{"item_id": "i1", "name": "pen", "price": 1.50, "updated_at": "2024-01-01T10:00:00", "op": "U"}
{"item_id": "i2", "name": "ink", "price": 4.00, "updated_at": "2024-01-01T10:00:00", "op": "U"}
{"item_id": "i1", "name": "pen", "price": 1.75, "updated_at": "2024-01-01T11:00:00", "op": "U"}
"""

SINGULAR_TEST_SQL = """\
-- A singular data test (dbt's convention): the rows this query returns are failures.
-- `runner test` and `runner build` run it after the model it reads (ref('items')).
SELECT item_id, price
FROM {{ ref('items') }}
WHERE price < 0
"""

GITIGNORE = """\
# compiled SQL, the docs site, and the local target's warehouse and checkpoints
target/
"""

CI_YML = """\
# GitHub Actions: lint and compile (no JVM), then the tests (unit tests need Java for Spark).
name: runner
on: [push, pull_request]
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - uses: actions/setup-java@v4
        with:
          distribution: temurin
          java-version: "17"
      # install the runner as you did locally, e.g. from its repository:
      - run: pip install "delta-stream-runner @ git+https://github.com/OWNER/delta-stream-runner"
      - run: runner lint --format github
      - run: runner compile
      - run: runner test --select test_type:unit
"""

FILES: dict[str, str] = {
    "project.yml": PROJECT_YML,
    "streams/events.yml": STREAM_YML,
    "models/items.sql": MODEL_SQL,
    "models/schema.yml": SCHEMA_YML,
    "tests/assert_no_negative_prices.sql": SINGULAR_TEST_SQL,
    "data/events/events-0001.json": SAMPLE_EVENTS,
    "macros/.gitkeep": "",
    "seeds/.gitkeep": "",
    ".gitignore": GITIGNORE,
    ".github/workflows/runner.yml": CI_YML,
}


def init_project(directory: Path, name: str | None = None) -> list[Path]:
    """Write the starter project into ``directory`` (created if missing) and return the files.

    Refuses a directory that already has a project.yml, or any of the files, so nothing a
    user wrote is overwritten."""
    directory = directory.resolve()
    project_name = name or _project_name(directory)
    existing = [rel for rel in FILES if (directory / rel).exists()]
    if existing:
        raise ConfigError(
            f"{directory} already has {', '.join(existing)}: runner init writes only into a new "
            "or empty project",
            hint="choose another directory: runner init my_project",
        )
    written: list[Path] = []
    for rel, text in FILES.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel == "project.yml":
            text = text.format(name=project_name)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _project_name(directory: Path) -> str:
    cleaned = "".join(c if c.isalnum() else "_" for c in directory.name).strip("_").lower()
    return cleaned or "my_project"


def next_steps(directory: Path) -> list[str]:
    """What to run after ``runner init``, in order."""
    here = directory.resolve() == Path.cwd().resolve()
    return [
        *([] if here else [f"cd {directory}"]),
        "runner debug                 # Java, the jars, the target and its paths (no JVM)",
        "runner lint                  # check the model (no JVM)",
        "runner compile               # the SQL it runs, in target/compiled/",
        "runner run -s items          # process data/events/ into silver.items (starts Spark)",
        "runner show -m items         # print the table",
        "runner test                  # the unit test and data tests",
        "runner build                 # all of it in DAG order: tests, model, tests",
    ]
