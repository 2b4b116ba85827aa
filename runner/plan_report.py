"""How `runner plan` shows its findings: a table for people, JSON for CI."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from runner.plan import ModelPlan

# every status a model can have, in the order the summary counts them
STATUSES = ("no_change", "new", "note", "target_addition", "logic", "target_rewrite", "source")


def exit_code(plans: list[ModelPlan]) -> int:
    """1 when a selected model needs action, else 0."""
    return 1 if any(plan.needs_action for plan in plans) else 0


def plan_json(plans: list[ModelPlan]) -> str:
    """The plan as JSON: one entry per model, and a summary."""
    models = [plan_entry(plan) for plan in plans]
    summary = {
        "models": len(plans),
        "needs_action": sum(plan.needs_action for plan in plans),
        "by_status": {
            status: sum(plan.headline == status for plan in plans)
            for status in STATUSES
            if any(plan.headline == status for plan in plans)
        },
    }
    return json.dumps({"models": models, "summary": summary}, indent=2) + "\n"


def plan_entry(plan: ModelPlan) -> dict[str, Any]:
    return {
        "model": plan.model,
        "status": plan.headline,
        "needs_action": plan.needs_action,
        "replay_safe": plan.replay.safe,
        "replay_reason": plan.replay.reason,
        "recorded_at": plan.recorded_at or None,
        "fingerprint": plan.fingerprints or None,
        "changes": [
            {
                "kind": change.kind,
                "subject": change.subject,
                "means": change.means,
                "todo": change.todo,
                "needs_action": change.needs_action,
            }
            for change in plan.changes
        ],
        "diff": plan.diff or None,
    }


def plan_renderable(plans: list[ModelPlan], target: str) -> RenderableType:
    """The table, then each model's SQL diff, then a summary line."""
    table = Table(title=f"runner plan: target {target}", show_lines=True)
    table.add_column("model", no_wrap=True)
    table.add_column("change", overflow="fold")
    table.add_column("what it means", overflow="fold")
    table.add_column("what to do", overflow="fold")
    for plan in plans:
        if plan.status == "new":
            table.add_row(
                plan.model,
                "new",
                "no record of a run in its checkpoint: it never ran on this target (or not "
                "since records were kept)",
                "nothing: the next start creates what it needs",
            )
        elif plan.status == "no_change":
            table.add_row(
                plan.model, "no change", f"runs as it last ran ({plan.recorded_at})", "nothing"
            )
        for change in plan.changes:
            label = f"{change.kind}: {change.subject}"
            table.add_row(plan.model, label, change.means, change.todo)
    parts: list[RenderableType] = [table]
    for plan in plans:
        safe = "safe to replay" if plan.replay.safe else "not safe to replay"
        parts.append(Text(f"{plan.model}: {safe}: {plan.replay.reason}"))
    for plan in plans:
        if plan.diff:
            parts.append(Text(f"\n{plan.model}: compiled per-batch SQL, last run -> now"))
            parts.append(Syntax(plan.diff.rstrip("\n"), "diff", theme="ansi_dark"))
    acting = [plan.model for plan in plans if plan.needs_action]
    summary = (
        f"{len(acting)} of {len(plans)} model(s) need action: {', '.join(acting)}"
        if acting
        else f"{len(plans)} model(s): nothing needs action"
    )
    parts.append(Text(summary))
    return Group(*parts)


def print_plan(plans: list[ModelPlan], target: str, console: Console) -> None:
    console.print(plan_renderable(plans, target))
