"""The artifacts of ``runner compile``: the SQL each model will run, and a manifest, written
under target/compiled/.

Every file is byte-identical across runs and machines: paths are project-relative (table
locations too, through ``compile_setup(..., location_root=...)``), JSON keys are sorted and
nothing records a time or a user.

The statements are written exactly as rendered, not re-printed by sqlglot. That is deliberate:
reviewers should read the text Spark will receive, and sqlglot's pretty-printer changes it
(``-- comments`` become ``/* */`` and move to the end of the statement, ``UPDATE SET *`` is
split over two lines, keywords are re-cased). The built-in macros use Jinja whitespace control,
so the rendered SQL is already laid out for reading.

Pure Python: no pyspark import.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from runner.errors import RunnerError
from runner.lineage import (
    QUARANTINE_COLUMNS,
    Lineage,
    build_lineage,
    model_quarantines,
    quarantine_location,
    quarantine_table,
    stream_quarantines,
)
from runner.model_sql import (
    CompiledStatement,
    compile_batch,
    compile_expectations,
    compile_maintenance,
    compile_setup,
    relative_location,
    set_properties_statement,
    target_columns,
)
from runner.project import Project
from runner.secrets import redact, redact_data
from runner.singular_sql import load_singular_tests
from runner.specs.data_tests import load_data_tests
from runner.specs.model import ModelSpec
from runner.specs.models_yaml import ModelDocs, model_descriptions
from runner.specs.seeds import SeedSpec, load_seeds, read_seed
from runner.specs.stream import StreamSpec
from runner.storage import Location

COMPILED_DIR = Path("target") / "compiled"
MANIFEST_NAME = "manifest.json"
# 2: lineage, seeds, depends_on.models through streams; 3: each model's compiled SQL checksum;
# 4: singular tests (tests/*.sql): "tests" and test nodes in the lineage
MANIFEST_VERSION = 4
_RULE = "-- " + "=" * 94


def compiled_dir(project: Project) -> Path:
    return project.root / COMPILED_DIR


def project_path(project: Project, path: Location) -> str:
    """``path`` relative to the project root, in POSIX form (as it appears in compiled files)."""
    return relative_location(path, project.root)


def write_compiled(
    project: Project, select: list[str] | None = None, batch_id: int = 0
) -> list[Path]:
    """Write ``<model>.sql`` for each selected model (all by default) and the manifest.

    Returns the files written. Without a selection (None; ``[]`` selects no model), ``.sql``
    files of models that no longer exist are removed, so the directory mirrors the project.
    """
    models = (
        [project.model(name) for name in select]
        if select is not None
        else list(project.models.values())
    )
    out_dir = compiled_dir(project)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for model in sorted(models, key=lambda m: m.name):
        path = out_dir / f"{model.name}.sql"
        _write_if_changed(path, render_compiled_model(project, model, batch_id))
        written.append(path)
    if select is None:
        for stale in sorted(out_dir.glob("*.sql")):
            if stale.stem not in project.models:
                stale.unlink()
    manifest = out_dir / MANIFEST_NAME
    _write_if_changed(manifest, manifest_json(project))
    written.append(manifest)
    return written


def _write_if_changed(path: Path, text: str) -> None:
    # Leaves the file (and its mtime) alone when nothing changed, which keeps make-style
    # tooling and editors quiet. Values from env_var() are written as env_var('NAME').
    text = redact(text)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8", newline="\n")


# -- one model ----------------------------------------------------------------------------


def render_compiled_model(project: Project, model: ModelSpec, batch_id: int = 0) -> str:
    """The text of ``target/compiled/<model>.sql``: set-up, per-batch and maintenance SQL."""
    source = project_path(project, model.file)
    every = model.config.optimize_every
    lines = [
        f"-- Compiled by `runner compile` from {source}. Do not edit: edit the model.",
        f"-- model {model.name}: stream {model.config.stream} -> {model.target_table}, "
        f"target {project.target.name}, batch {batch_id}",
        "-- Table locations are shown relative to the project root; at run time they are absolute.",
    ]
    lines += _section("SET-UP: runs once, before the first batch of each start")
    for statement, when in setup_steps(project, model):
        lines += _statement(statement, when)
    lines += render_expectations(project, model, batch_id)
    lines += _section(f"PER BATCH: the statements of batch {batch_id}, in order")
    for statement in compile_batch(project, model, batch_id):
        if statement.phase == "batch":
            lines += _statement(statement, f"{source}:{statement.line}")
    maintenance = compile_maintenance(project, model, batch_id)
    if maintenance:
        lines += _section(f"MAINTENANCE: {maintenance_schedule(every or 0, batch_id)}")
        for statement in maintenance:
            lines += _statement(
                statement, f"config(optimize_every, zorder_by) at {source}:{model.config_line}"
            )
    else:
        lines += _section("MAINTENANCE: none (the model sets no optimize_every)")
    return "\n".join(lines).rstrip("\n") + "\n"


def setup_steps(project: Project, model: ModelSpec) -> list[tuple[CompiledStatement, str]]:
    """The model's set-up statements in order, each with when it runs: ``setup[1]`` is either
    the CREATE or the registration of an existing table. The compiled file prints the condition
    above each statement and the docs site beside it."""
    setup = compile_setup(project, model, location_root=project.root)
    steps = [
        (setup.create_schema, "always"),
        (setup.create, "when no Delta table exists at the target's location"),
        (setup.attach, "when a Delta table exists there: register it under its name"),
    ]
    if setup.properties:
        steps.append(
            (
                set_properties_statement(project, model, setup.properties),
                "when the existing table's properties differ (only the differing ones are set)",
            )
        )
    return steps


def render_expectations(project: Project, model: ModelSpec, batch_id: int = 0) -> list[str]:
    """The EXPECTATIONS section of a compiled model (no lines when it declares none)."""
    checks = compile_expectations(project, model, batch_id)
    if checks is None:
        return []
    at = f"{project_path(project, model.file)}:{model.config_line_of('expectations')}"
    lines = _section(
        f"EXPECTATIONS: on every row of batch {batch_id}, before its statements "
        f"(config(expectations) at {at})"
    )
    for index, (note, sql) in enumerate(checks.steps(quarantine_table(model.name))):
        lines += ["", f"-- expectations[{index}]: {note}", f"{sql};"]
    return lines


def maintenance_schedule(every: int, batch_id: int) -> str:
    """``after every 2nd batch (batch ids 1, 3, 5, ...); not due after batch 0``."""
    due = [str(every * k - 1) for k in (1, 2, 3)]
    when = "after every batch" if every == 1 else f"after every {_ordinal(every)} batch"
    status = "due" if (batch_id + 1) % every == 0 else "not due"
    return f"{when} (batch ids {', '.join(due)}, ...); {status} after batch {batch_id}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _section(title: str) -> list[str]:
    return ["", _RULE, f"-- {title}", _RULE]


def _statement(statement: CompiledStatement, note: str) -> list[str]:
    return ["", f"-- {statement.label}: {note}", f"{statement.sql};"]


# -- manifest -----------------------------------------------------------------------------


def manifest_json(project: Project) -> str:
    """The manifest as JSON text: sorted keys, two-space indent, trailing newline."""
    manifest = redact_data(build_manifest(project))  # env_var() values as env_var('NAME')
    return json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n"


def build_manifest(project: Project) -> dict[str, Any]:
    """Models, streams, target tables, dependencies and config of the project, as plain data.

    It describes the project, not one batch (the batch id is in each compiled file's header),
    so ``--select`` and ``--batch-id`` never leave it inconsistent with the files beside it."""
    target = project.target
    seeds = load_seeds(project)
    singular = load_singular_tests(project, seeds)
    lineage = build_lineage(project, seeds, load_data_tests(project, seeds), singular)
    docs = model_descriptions(project)
    return {
        "manifest_version": MANIFEST_VERSION,
        "project": {"name": project.name, "vars": project.vars},
        "target": {
            "name": target.name,
            "master": target.master,
            "warehouse": project_path(project, target.warehouse),
            "checkpoints": project_path(project, target.checkpoint_root),
            "spark_conf": target.spark_conf,
        },
        "models": {
            name: _model_entry(project, m, lineage, docs.get(name, ModelDocs()))
            for name, m in project.models.items()
        },
        "streams": {name: _stream_entry(project, s) for name, s in project.streams.items()},
        "targets": {m.target_table: _target_entry(project, m) for m in project.models.values()},
        "seeds": {name: _seed_entry(project, s) for name, s in sorted(seeds.items())},
        "quarantine": _quarantine_entries(project),
        "tests": {
            t.name: {
                "file": project_path(project, t.file),
                "test_type": "singular",
                "sql": t.sql,
                "depends_on": {"models": list(t.models), "seeds": list(t.seeds)},
            }
            for t in singular
        },
        "lineage": lineage.as_data(),
    }


def _stream_entry(project: Project, stream: StreamSpec) -> dict[str, Any]:
    return {
        "file": project_path(project, stream.file),
        "line": stream.line,
        "format": stream.format,
        "path": project_path(project, stream.path) if stream.path else None,
        "table": stream.table,
        "ref": stream.ref,
        "change_data_feed": stream.change_data_feed,
        "kafka": asdict(stream.kafka) if stream.kafka else None,
        "schema": stream.columns_ddl,
        "options": stream.options,
        "trigger": asdict(stream.trigger),
        "description": stream.description,
    }


def _seed_entry(project: Project, seed: SeedSpec) -> dict[str, Any]:
    try:
        rows: int | None = len(read_seed(seed))
    except RunnerError:  # a bad value: `runner seed` reports it; the manifest is still written
        rows = None
    return {
        "file": project_path(project, seed.csv),
        "declared_in": f"{project_path(project, seed.file)}:{seed.line}",
        "table": seed.table,
        "columns": seed.columns_ddl,
        "rows": rows,
        "description": seed.description,
    }


# What lands in a model's quarantine table from its source, by the source's format.
_REJECTED_RECORDS = {
    "kafka": "records whose value is not valid JSON, does not match the schema or lacks a "
    "required field",
}
_REJECTED_LINES = "lines that do not parse or hold a value of the wrong type for the schema"


def _quarantine_entries(project: Project) -> dict[str, dict[str, Any]]:
    """``quarantine.<model>`` of each model that quarantines: its model, location, columns and
    what lands there (its source's rejected records, rows failing its expectations)."""
    entries: dict[str, dict[str, Any]] = {}
    for name, model in sorted(project.models.items()):
        stream = project.streams.get(model.config.stream or "")
        if not model_quarantines(model, stream):
            continue
        receives = []
        if stream is not None and stream_quarantines(stream):
            rejected = _REJECTED_RECORDS.get(stream.format, _REJECTED_LINES)
            receives.append(f"{rejected} (stream {stream.name}, {stream.format})")
        receives += [
            f"rows failing expectation {e.name}: {e.condition}"
            for e in model.config.expectations
            if e.action == "quarantine"
        ]
        location = quarantine_location(project.target.warehouse, name)
        entries[quarantine_table(name)] = {
            "model": name,
            "location": project_path(project, location),
            "columns": QUARANTINE_COLUMNS,
            "receives": receives,
        }
    return entries


def _model_entry(
    project: Project, model: ModelSpec, lineage: Lineage, docs: ModelDocs
) -> dict[str, Any]:
    return {
        "description": docs.description,
        "columns": {c: {"name": c, "description": d} for c, d in sorted(docs.columns.items())},
        "file": project_path(project, model.file),
        "compiled": (COMPILED_DIR / f"{model.name}.sql").as_posix(),
        "stream": model.config.stream,
        "target": model.target_table,
        "config": asdict(model.config),
        "depends_on": {
            "models": sorted(lineage.upstream_models(model.name)),
            "streams": [model.config.stream],
        },
        "checkpoint": project_path(project, project.target.checkpoint_for(model.name)),
        "checksum": compiled_checksum(project, model),
    }


def compiled_checksum(project: Project, model: ModelSpec) -> dict[str, str]:
    """dbt's ``checksum`` shape, of the model's compiled SQL (batch 0, as `runner compile`
    writes it; env_var() values as env_var('NAME')): ``state:modified`` compares it."""
    text = redact(render_compiled_model(project, model))
    return {"name": "sha256", "checksum": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def _target_entry(project: Project, model: ModelSpec) -> dict[str, Any]:
    try:
        columns: list[str] | None = target_columns(project, model)
    except RunnerError:
        columns = None
    location = project.target.table_location(model.target_table)
    return {
        "model": model.name,
        "location": project_path(project, location),
        "columns": columns,
        "partitioned_by": model.config.partitioned_by,
        "table_properties": model.config.table_properties,
    }
