"""``runner docs generate``: a static site under target/docs/ that opens from file://.

The page's data (lineage, each model's source and compiled SQL, config, tests, descriptions,
each target's columns and properties, streams, seeds, quarantine tables, each model's last
`runner backfill` report from target/backfill/, and optionally each model's recent batches) is
written into
``index.html`` itself as JSON, because a browser refuses ``fetch()`` on file:// URLs. The
graph is laid out by Cytoscape.js with the dagre layout and the charts are drawn by Chart.js,
vendored under ``vendor/`` (MIT licences in ``vendor/LICENSES.txt``), so the page needs no network.

Pure Python: no pyspark import. The history comes in as plain dicts (``runner.cli.docs`` reads
the event log with Spark when asked to).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from runner.artifacts import build_manifest, project_path, setup_steps
from runner.backfill_record import read_backfill_record
from runner.model_sql import (
    CompiledStatement,
    compile_batch,
    compile_maintenance,
)
from runner.project import Project
from runner.secrets import redact, redact_data
from runner.specs.model import ModelSpec
from runner.specs.suite import TestSuite
from runner.suite_selection import load_suite

DOCS_DIR = Path("target") / "docs"
ASSETS = Path(__file__).parent
STATIC_FILES = ("docs.js", "docs.css")
VENDOR_FILES = (
    "cytoscape.min.js",
    "dagre.min.js",
    "cytoscape-dagre.js",
    "chart.umd.min.js",
    "LICENSES.txt",
)
_DATA_MARK = "/*RUNNER_DOCS_DATA*/null"

History = dict[str, list[dict[str, Any]]]  # model -> event-log rows, oldest first


def docs_dir(project: Project) -> Path:
    return project.root / DOCS_DIR


def generate_docs(project: Project, history: History | None = None) -> Path:
    """Write the site; returns the path of its ``index.html``."""
    out = docs_dir(project)
    (out / "vendor").mkdir(parents=True, exist_ok=True)
    for name in STATIC_FILES:
        shutil.copyfile(ASSETS / name, out / name)
    for name in VENDOR_FILES:
        shutil.copyfile(ASSETS / "vendor" / name, out / "vendor" / name)
    data = site_data(project, history)
    # '</' would end the <script> element early; '<\/' is the same string to JavaScript.
    # values from env_var() are shown as env_var('NAME') (runner/secrets.py)
    payload = json.dumps(redact_data(data), sort_keys=True, default=str).replace("</", "<\\/")
    page = (ASSETS / "index.html").read_text(encoding="utf-8").replace(_DATA_MARK, payload)
    index = out / "index.html"
    index.write_text(redact(page), encoding="utf-8")
    return index


def site_data(project: Project, history: History | None = None) -> dict[str, Any]:
    """Everything the page shows, as plain data."""
    manifest = build_manifest(project)
    suite = load_suite(project)
    return {
        "project": project.name,
        "target": project.target.name,
        "lineage": manifest["lineage"],
        "models": {
            name: _model_data(project, model, manifest, suite)
            for name, model in sorted(project.models.items())
        },
        "streams": manifest["streams"],
        "targets": manifest["targets"],
        "seeds": manifest["seeds"],
        "quarantine": manifest["quarantine"],
        "tests": manifest["tests"],  # singular tests (tests/*.sql): node kind test
        "history": history,
    }


def _model_data(
    project: Project, model: ModelSpec, manifest: dict[str, Any], suite: TestSuite
) -> dict[str, Any]:
    entry = manifest["models"][model.name]
    per_batch = [s for s in compile_batch(project, model, 0) if s.phase == "batch"]
    return {
        "file": entry["file"],
        "description": entry["description"],
        "columns": entry["columns"],
        "source_sql": model.file.read_text(encoding="utf-8"),
        "stream": model.config.stream,
        "target": model.target_table,
        "config": entry["config"],
        "depends_on": entry["depends_on"],
        "checkpoint": entry["checkpoint"],
        "backfill": read_backfill_record(project, model.name),  # the last `runner backfill`
        "compiled": {
            "setup": [
                {**_statement(project, s), "when": when} for s, when in setup_steps(project, model)
            ],
            "batch": [_statement(project, s) for s in per_batch],
            "maintenance": [_statement(project, s) for s in compile_maintenance(project, model, 0)],
        },
        "data_tests": [
            {
                "name": t.name,
                "kind": t.kind,
                "column": t.column,
                "params": t.params,
                "where": f"{project_path(project, t.file)}:{t.line}",
                "reads": sorted({d.table for d in t.reads}),
            }
            for t in suite.data_tests
            if t.model == model.name
        ],
        "unit_tests": [
            {
                "name": t.name,
                "description": t.description,
                "batches": len(t.batches),
                "where": f"{project_path(project, t.file)}:{t.line}",
            }
            for t in suite.unit_tests
            if t.model == model.name
        ],
    }


def _statement(project: Project, statement: CompiledStatement) -> dict[str, Any]:
    return {
        "label": statement.label,
        "keyword": statement.keyword,
        "sql": statement.sql,
        "where": f"{project_path(project, statement.file)}:{statement.line}",
    }
