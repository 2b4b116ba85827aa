"""What a model last ran: the record each start keeps beside the model's checkpoint.

At every start the Spark half writes ``<checkpoints>/<model>/runner_last_run.json`` (atomically:
a temp file renamed over it) with what decides the model's behaviour, so ``runner plan`` can
later say what an edit changes:

- ``sql``: the model as SQL, rendered the way ``runner compile`` renders it, for a fixed sample
  batch (``SAMPLE_BATCH``: batch 0, the stream's declared columns, no batch statistics), so the
  same project always gives the same text: the set-up statements, the expectation checks, the
  per-batch statements and the maintenance statements. Whole-line ``--`` comments are left out:
  editing a comment changes nothing that runs.
- ``target``: the config that shapes the target table (columns, ``unique_key``, ``sequence_by``,
  partitioning, clustering, table properties, expectations, ``schema_drift``).
- ``stream``: the stream declaration (format, path / topic / table, the options, the schema).
  The trigger is not recorded: Spark resumes a checkpoint under any trigger.

``fingerprint`` is the SHA-256 of that content. Values from ``env_var()`` are recorded as
``env_var('NAME')`` (runner/secrets.py ``redact``), never as the value.

Pure Python: the record is computed from the loaded project (``model_record``); the Spark half
(runner/spark/streaming/query.py) only writes it when the model's query has started.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from runner import storage
from runner.artifacts import render_expectations
from runner.ddl import column_names, split_columns
from runner.errors import RunnerError
from runner.model_sql import (
    compile_batch,
    compile_maintenance,
    compile_setup,
    relative_location,
)
from runner.project import Project
from runner.secrets import redact_data
from runner.specs.model import ModelSpec
from runner.specs.stream import StreamSpec
from runner.storage import Location

LAST_RUN_FILE = "runner_last_run.json"
RECORD_VERSION = 1
SAMPLE_BATCH = 0  # the batch id the recorded SQL is rendered for (columns: the declared ones)


class CorruptLastRunRecord(RunnerError):
    """The record of what a model last ran cannot be read."""


def last_run_path(checkpoint: Location) -> Location:
    return checkpoint / LAST_RUN_FILE


def model_record(project: Project, model: ModelSpec) -> dict[str, Any]:
    """The record of ``model`` as the project stands: its content and its fingerprint."""
    content = redact_data(
        {
            "sql": model_sql_sections(project, model),
            "target": target_shape(project, model),
            "stream": stream_declaration(project, project.stream_of(model)),
        }
    )
    return {
        "version": RECORD_VERSION,
        "model": model.name,
        "fingerprint": fingerprint(content),
        **content,
    }


def fingerprint(content: dict[str, Any]) -> str:
    """SHA-256 of ``content`` as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_sql_sections(project: Project, model: ModelSpec) -> dict[str, list[str]]:
    """The model's SQL for the sample batch, section by section, as ``runner compile`` renders
    it (locations relative to the project root, so the record is the same on every machine)."""
    setup = compile_setup(project, model, location_root=project.root)
    expectations = "\n".join(render_expectations(project, model, SAMPLE_BATCH)).strip()
    statements = compile_batch(project, model, SAMPLE_BATCH)
    return {
        "setup": [_code(setup.create_schema.sql), _code(setup.create.sql)],
        "expectations": [_code(expectations)] if expectations else [],
        "batch": [_code(s.sql) for s in statements if s.phase == "batch"],
        "maintenance": [_code(s.sql) for s in compile_maintenance(project, model, SAMPLE_BATCH)],
    }


def _code(sql: str) -> str:
    """``sql`` without its whole-line comments and trailing blanks."""
    lines = [line.rstrip() for line in sql.splitlines() if not line.strip().startswith("--")]
    return "\n".join(line for line in lines if line).strip()


def target_shape(project: Project, model: ModelSpec) -> dict[str, Any]:
    """The config that shapes the target table."""
    config = model.config
    ddl = project.target_columns_ddl(model)
    return {
        "table": model.target_table,
        "columns": [list(pair) for pair in column_types(ddl)] if ddl else [],
        "unique_key": config.unique_keys,
        "sequence_by": _as_list(config.sequence_by),
        "partitioned_by": list(config.partitioned_by),
        "cluster_by": list(config.cluster_by),
        "table_properties": dict(sorted(config.table_properties.items())),
        "expectations": [
            {"name": e.name, "condition": e.condition, "action": e.action}
            for e in config.expectations
        ],
        "schema_drift": config.schema_drift,
    }


def column_types(ddl: str) -> list[tuple[str, str]]:
    """``'a STRING, b DECIMAL(10,2)'`` -> ``[('a', 'STRING'), ('b', 'DECIMAL(10,2)')]``: each
    column's name (backticks dropped) and the rest of its definition, upper-cased."""
    pairs = []
    for definition, name in zip(split_columns(ddl), column_names(ddl), strict=True):
        rest = definition.strip()[len(name) :].strip()
        pairs.append((name.strip("`"), " ".join(rest.split()).upper()))
    return pairs


def stream_declaration(project: Project, stream: StreamSpec) -> dict[str, Any]:
    """What decides which data the stream reads, and as what."""
    declared: dict[str, Any] = {
        "name": stream.name,
        "format": stream.format,
        "path": _project_path(project, stream.path),
        "table": stream.table,
        "ref": stream.ref,
        "ref_table": project.models[stream.ref].target_table
        if stream.ref and stream.ref in project.models
        else None,
        "change_data_feed": stream.change_data_feed,
        "options": {key: stream.options[key] for key in sorted(stream.options)},
        "schema": " ".join(stream.columns_ddl.split()) if stream.columns_ddl else None,
    }
    if stream.kafka is not None:
        declared["options"] = {
            **declared["options"],
            **dict(sorted(stream.kafka.source_options().items())),
        }
        declared["schema"] = " ".join(stream.kafka.value_schema.split()) or declared["schema"]
    return declared


def _project_path(project: Project, path: Path | None) -> str | None:
    if path is None:
        return None
    if path.is_absolute() and path.is_relative_to(project.root):
        return relative_location(path, project.root)
    return PurePosixPath(path).as_posix()


def _as_list(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def write_last_run(checkpoint: Location, record: dict[str, Any]) -> Location:
    """Write ``record`` (stamped with the time) into ``checkpoint`` whole, so a kill leaves
    the old record or the new one, never half of one. Returns the file written."""
    stamped = {**record, "recorded_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")}
    path = last_run_path(checkpoint)
    storage.write_text(path, json.dumps(stamped, indent=2, sort_keys=True) + "\n")
    return path


def read_last_run(checkpoint: Location) -> dict[str, Any] | None:
    """The record in ``checkpoint``; None when there is none (the model never started, or it
    last started before records were kept). One that does not parse is CorruptLastRunRecord."""
    path = last_run_path(checkpoint)
    try:
        text = storage.read_text(path)
    except FileNotFoundError:
        return None
    try:
        record = json.loads(text)
        if not isinstance(record, dict) or not isinstance(record.get("fingerprint"), str):
            raise ValueError("no fingerprint")
        for key in ("sql", "target", "stream"):
            if not isinstance(record.get(key), dict):
                raise ValueError(f"no {key}")
    except ValueError as exc:
        raise CorruptLastRunRecord(
            f"the record of what model '{checkpoint.name}' last ran, {path}, cannot be read "
            f"({exc})",
            hint="delete that one file: the next start of the model records it anew "
            "(until then plan treats the model as new)",
        ) from None
    return record
