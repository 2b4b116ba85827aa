"""``target/backfill/<model>.json``: the last `runner backfill` report of each model, kept so
`runner docs generate` can show it on the model's page.

Each run (dry run or ``--apply``) replaces the model's file with the report ``--format json``
prints (runner/backfill_report.py), plus when it ran, whether it was applied, and the two
sentences the terminal shows for the source's gap and the apply, so the site says exactly what
the terminal said::

    {"ran_at": "2026-11-25T15:50:02Z", "dry_run": true,
     "text": {"source_gap": "source: holds everything ...", "apply": "dry run: --apply would ..."},
     "model": "orders_merge", "rows": {...}, "difference": {...}, "samples": [...], ...}

Pure Python.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runner.backfill_report import (
    ApplyOutcome,
    BackfillDiff,
    SourceGap,
    apply_text,
    backfill_document,
    gap_text,
)
from runner.project import Project

BACKFILL_DIR = Path("target") / "backfill"


def record_path(project: Project, model_name: str) -> Path:
    return project.root / BACKFILL_DIR / f"{model_name}.json"


def backfill_record(
    diff: BackfillDiff,
    gap: SourceGap,
    allow_deletes: bool,
    outcome: ApplyOutcome | None,
    ran_at: datetime,
) -> dict[str, Any]:
    """What target/backfill/<model>.json holds for one run."""
    return {
        **backfill_document(diff, gap, allow_deletes, outcome),
        "ran_at": ran_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "dry_run": outcome is None,
        "text": {
            "source_gap": gap_text(gap),
            "apply": apply_text(diff, gap, allow_deletes, outcome),
        },
    }


def write_backfill_record(project: Project, record: dict[str, Any]) -> Path:
    """Replace the model's record (a temp file renamed over it: a reader never sees half)."""
    path = record_path(project, record["model"])
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temp, path)
    return path


def read_backfill_record(project: Project, model_name: str) -> dict[str, Any] | None:
    """The model's last recorded backfill; None when there is none. A file that does not parse
    (edited by hand) is reported as such, so the site says what to do rather than failing."""
    path = record_path(project, model_name)
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        return {
            "error": f"{BACKFILL_DIR / path.name} does not parse ({error}): run "
            f"`runner backfill --model {model_name}` again to record a new report"
        }
    return found if isinstance(found, dict) else None
