"""What `runner backfill` found and did: the difference between the live target and its shadow
per key, the source's gaps, the apply; as tables for people and JSON for machines. Pure."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

RowKind = Literal["only_live", "only_shadow", "changed"]
KIND_TITLES: dict[RowKind, str] = {
    "only_live": "only in live",
    "only_shadow": "only in shadow",
    "changed": "changed",
}


@dataclass(frozen=True)
class RowSample:
    """One differing row: its key, and the values that differ (all of them for a row on one
    side only), as text."""

    kind: RowKind
    key: dict[str, str]
    live: dict[str, str] = field(default_factory=dict)
    shadow: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SourceGap:
    """What the source no longer holds of what the live target was built from."""

    checked: bool  # False: this kind of source is not checked (``note`` says why)
    missing: tuple[str, ...] = ()  # e.g. landing files the live checkpoint read, gone now
    note: str = ""

    @property
    def found(self) -> bool:
        return bool(self.missing)


@dataclass(frozen=True)
class BackfillDiff:
    """The live target against the shadow, per ``key``."""

    model: str
    live_table: str
    shadow_table: str
    key: tuple[str, ...]
    live_rows: int
    shadow_rows: int
    only_live: int
    only_shadow: int
    changed: int
    columns: dict[str, int]  # column -> changed rows in which it differs
    samples: tuple[RowSample, ...] = ()
    shadow_batches: int = 0
    compared: tuple[str, ...] = ()  # the columns besides the key, compared in both

    @property
    def differs(self) -> bool:
        return bool(self.only_live or self.only_shadow or self.changed)


@dataclass(frozen=True)
class ApplyOutcome:
    """What ``--apply`` did to the live target and its checkpoint."""

    version: int | None  # the live table's version the apply committed; None: no commit
    already_applied: bool  # Delta skipped the MERGE: an earlier (killed) run committed it
    inserted: int
    updated: int
    deleted: int
    kept: int  # rows only in live that were kept (the source no longer holds their events)
    handed_over: bool
    note: str = ""


def deletes_allowed(gap: SourceGap, allow_deletes: bool) -> bool:
    """Whether the apply deletes the rows only in live: yes, unless the source forgot
    something the live target was built from (then a row only in live may be one the shadow
    cannot rebuild), or ``--allow-deletes`` says to anyway."""
    return allow_deletes or not gap.found


def backfill_json(
    diff: BackfillDiff, gap: SourceGap, allow_deletes: bool, outcome: ApplyOutcome | None
) -> str:
    """The report as JSON (one object; keys documented in docs/changing-a-model.md)."""
    return json.dumps(backfill_document(diff, gap, allow_deletes, outcome), indent=2) + "\n"


def backfill_document(
    diff: BackfillDiff, gap: SourceGap, allow_deletes: bool, outcome: ApplyOutcome | None
) -> dict[str, Any]:
    """The report as plain data: what ``--format json`` prints and target/backfill/ keeps."""
    deletes = deletes_allowed(gap, allow_deletes)
    return {
        "model": diff.model,
        "live_table": diff.live_table,
        "shadow_table": diff.shadow_table,
        "unique_key": list(diff.key),
        "shadow_batches": diff.shadow_batches,
        "rows": {"live": diff.live_rows, "shadow": diff.shadow_rows},
        "difference": {
            "only_live": diff.only_live,
            "only_shadow": diff.only_shadow,
            "changed": diff.changed,
            "changed_by_column": dict(sorted(diff.columns.items())),
        },
        "samples": [
            {"kind": s.kind, "key": s.key, "live": s.live, "shadow": s.shadow} for s in diff.samples
        ],
        "source_gap": {"checked": gap.checked, "missing": list(gap.missing), "note": gap.note},
        "apply_plan": {
            "insert": diff.only_shadow,
            "update": diff.changed,
            "delete": diff.only_live if deletes else 0,
            "keep": 0 if deletes else diff.only_live,
        },
        "applied": None
        if outcome is None
        else {
            "version": outcome.version,
            "already_applied": outcome.already_applied,
            "inserted": outcome.inserted,
            "updated": outcome.updated,
            "deleted": outcome.deleted,
            "kept": outcome.kept,
            "handed_over": outcome.handed_over,
            "note": outcome.note,
        },
    }


def backfill_renderable(
    diff: BackfillDiff, gap: SourceGap, allow_deletes: bool, outcome: ApplyOutcome | None
) -> RenderableType:
    """The counts, the changed columns, the samples, the source's gap, then what the apply
    does (a dry run) or did."""
    title = Text(
        f"backfill {diff.model}: {diff.live_table} (live) vs {diff.shadow_table} (shadow), "
        f"by {', '.join(diff.key)}"
    )
    counts = Table()
    for heading in ("rows in live", "rows in shadow", *KIND_TITLES.values()):
        counts.add_column(heading, justify="right")
    numbers = (diff.live_rows, diff.shadow_rows, diff.only_live, diff.only_shadow, diff.changed)
    counts.add_row(*(str(n) for n in numbers))
    parts: list[RenderableType] = [title, counts]
    if diff.columns:
        columns = Table()
        columns.add_column("column")
        columns.add_column("changed rows", justify="right")
        for name, rows in sorted(diff.columns.items(), key=lambda item: (-item[1], item[0])):
            columns.add_row(name, str(rows))
        parts.append(columns)
    if diff.samples:
        samples = Table(title="samples")
        for heading in ("", "key", "live", "shadow"):
            samples.add_column(heading, overflow="fold")
        for sample in diff.samples:
            samples.add_row(
                KIND_TITLES[sample.kind],
                _pairs(sample.key),
                _pairs(sample.live) or "-",
                _pairs(sample.shadow) or "-",
            )
        parts.append(samples)
    parts.append(Text(gap_text(gap)))
    parts.append(Text(apply_text(diff, gap, allow_deletes, outcome)))
    return Group(*parts)


def gap_text(gap: SourceGap) -> str:
    if not gap.checked:
        return f"source: not checked for gaps ({gap.note})"
    if not gap.found:
        return f"source: holds everything the live target was built from ({gap.note})"
    shown = ", ".join(gap.missing[:5]) + (
        f" and {len(gap.missing) - 5} more" if len(gap.missing) > 5 else ""
    )
    return f"source gap: {gap.note}: {shown}"


def apply_text(
    diff: BackfillDiff, gap: SourceGap, allow_deletes: bool, outcome: ApplyOutcome | None
) -> str:
    deletes = deletes_allowed(gap, allow_deletes)
    if outcome is not None:
        if outcome.already_applied:
            head = (
                f"applied: an earlier run committed this backfill (version {outcome.version})"
                if outcome.version is not None
                else "applied: an earlier run committed this backfill"
            )
        elif outcome.version is None:
            head = "applied: the live target already equals the shadow: no commit"
        else:
            head = (
                f"applied: one commit, version {outcome.version} of {diff.live_table}: inserted "
                f"{outcome.inserted}, updated {outcome.updated}, deleted {outcome.deleted}"
            )
        kept = f"; kept {outcome.kept} row(s) only in live" if outcome.kept else ""
        handover = (
            f"; the live model resumes from the shadow's position ({diff.shadow_batches} "
            "batch(es) read)"
            if outcome.handed_over
            else ""
        )
        return head + kept + handover + (f"; {outcome.note}" if outcome.note else "")
    if not diff.differs:
        return (
            "dry run: the live target equals the shadow; --apply hands the live model the "
            "shadow's position only"
        )
    delete = (
        f"delete {diff.only_live}"
        if deletes
        else f"keep the {diff.only_live} row(s) only in live (the source gap; --allow-deletes "
        "deletes them)"
    )
    return (
        f"dry run: --apply would insert {diff.only_shadow}, update {diff.changed}, {delete} in "
        f"one commit, then hand the live model the shadow's position"
    )


def _pairs(values: dict[str, str]) -> str:
    return ", ".join(f"{name}={value}" for name, value in values.items())
