"""What ``runner clean`` removes: the generated artifacts, never data unless asked.

dbt's ``clean`` removes project.yml's ``clean-targets`` (default: the whole target path). Here
``target/`` also holds the default warehouse and checkpoints (``target/<target>/...``), so the
default is only what commands regenerate (``DEFAULT_CLEAN_TARGETS``), and any path that is, holds
or lies inside a target's warehouse or checkpoints is refused unless the caller allows data.
Paths outside the project directory are refused too (dbt's ``--clean-project-files-only``).
Pure Python.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from runner.errors import ConfigError
from runner.specs.layout import PROJECT_FILE
from runner.storage import parse_location
from runner.yaml_loader import YamlMap, load_yaml, untemplated

CLEAN_TARGETS_KEY = "clean-targets"
# What `runner compile` and `runner docs generate` write; all of it is regenerated on demand.
DEFAULT_CLEAN_TARGETS = ("target/compiled", "target/docs")


@dataclass
class CleanPlan:
    """The paths ``runner clean`` would remove, and the ones it keeps and why."""

    remove: list[Path] = field(default_factory=list)
    missing: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)


def clean_plan(root: Path, *, include_data: bool = False) -> CleanPlan:
    """The plan for the project in ``root``: its ``clean-targets`` (or the default) checked
    against the project directory and every target's warehouse and checkpoints."""
    root = root.resolve()
    if not (root / PROJECT_FILE).is_file():
        raise ConfigError(
            f"no {PROJECT_FILE} in {root}",
            hint="run the command from the project directory or pass --project-dir",
        )
    doc = load_yaml(root / PROJECT_FILE)
    wanted = _clean_targets(doc)
    data = _data_directories(doc, root)
    plan = CleanPlan()
    for text in wanted:
        path = (root / text).resolve()
        if path == root or root not in path.parents:
            plan.refused.append((path, "not inside the project directory"))
            continue
        overlap = next(
            (d for d in data if path == d or d in path.parents or path in d.parents), None
        )
        if overlap is not None and not include_data:
            plan.refused.append(
                (path, f"holds data ({_shown(root, overlap)}); pass --include-data to remove it")
            )
            continue
        (plan.remove if path.exists() else plan.missing).append(path)
    return plan


def remove(plan: CleanPlan) -> None:
    for path in plan.remove:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def _clean_targets(doc: YamlMap) -> list[str]:
    value = doc.get(CLEAN_TARGETS_KEY)
    if value is None:
        return list(DEFAULT_CLEAN_TARGETS)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(
            f"{CLEAN_TARGETS_KEY} must be a list of paths relative to the project",
            file=doc.file,
            line=doc.line_of(CLEAN_TARGETS_KEY),
            hint=f"for example: {CLEAN_TARGETS_KEY}: [target/compiled, target/docs]",
        )
    return value


def _data_directories(doc: YamlMap, root: Path) -> list[Path]:
    """Every target's warehouse and checkpoints on a local disk (defaults included),
    resolved."""
    targets = doc.child("targets")
    found: list[Path] = []
    default = str(doc.get("default_target") or "local")
    for key in ("warehouse", "checkpoints"):  # the paths a target without them gets
        found.append((root / f"target/{default}/{key}").resolve())
    for name in targets:
        spec = targets.child(name)
        for key in ("warehouse", "checkpoints"):
            hint = "declare the path literally"
            location = parse_location(untemplated(spec, key, f"target/{name}/{key}", hint), root)
            if isinstance(location, Path):  # clean removes only folders of the project
                found.append(location)
    return found


def _shown(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
