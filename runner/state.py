"""``state:modified`` / ``state:new``: the models that differ from a previous manifest.

The state is a directory holding the ``manifest.json`` of an earlier ``runner compile``
(usually the main branch's ``target/compiled``). A model is new when that manifest lacks it,
and modified when it is new or its compiled SQL (checksum), its ``config()`` (tags aside, as in
dbt) or the declaration of the stream it reads differs. Pure Python.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runner.errors import ConfigError
from runner.project import Project

# Labels, not behaviour: dbt does not count them as modifications either.
_IGNORED_CONFIG = ("tags",)


def load_state_manifest(state: Path | None, where: str) -> dict[str, Any]:
    """The manifest in the ``--state`` directory, checked to be one this runner can compare."""
    if state is None:
        raise ConfigError(
            f"{where}: state: needs --state DIR, a directory with the manifest.json of an "
            "earlier `runner compile`",
            hint="for example: git worktree add ../base main && runner compile -p ../base, "
            "then --state ../base/target/compiled",
        )
    file = state / "manifest.json" if state.is_dir() else state
    if not file.is_file():
        raise ConfigError(
            f"--state {state}: no manifest.json there",
            hint="pass the target/compiled directory of a `runner compile` of the base version",
        )
    try:
        manifest = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--state {state}: cannot read {file.name}: {exc}", file=file) from exc
    models = manifest.get("models") if isinstance(manifest, dict) else None
    if not isinstance(models, dict) or any(
        not isinstance(m, dict) or "checksum" not in m for m in models.values()
    ):
        raise ConfigError(
            f"--state {state}: {file.name} is from an older runner (no model checksums)",
            file=file,
            hint="run `runner compile` on the base version again with this runner",
        )
    return manifest


def modified_models(project: Project, state: Path | None, where: str) -> dict[str, set[str]]:
    """``{'new': {...}, 'modified': {...}}``: model names compared with the state manifest."""
    from runner.artifacts import manifest_json

    old = load_state_manifest(state, where)
    new = json.loads(manifest_json(project))  # the same normalisation as the file written
    new_models: set[str] = set()
    modified: set[str] = set()
    for name, entry in new["models"].items():
        before = old["models"].get(name)
        if before is None:
            new_models.add(name)
            modified.add(name)
        elif _differs(entry, before, new, old):
            modified.add(name)
    return {"new": new_models, "modified": modified}


def _differs(entry: dict[str, Any], before: dict[str, Any], new: Any, old: Any) -> bool:
    if entry.get("checksum") != before.get("checksum"):
        return True
    if _config(entry) != _config(before):
        return True
    stream = entry.get("stream")
    return bool(
        stream != before.get("stream")
        or _documented(new.get("streams", {}).get(stream))
        != _documented(old.get("streams", {}).get(stream))
    )


def _documented(declaration: Any) -> Any:
    """A stream's declaration without its description, which changes no SQL (dbt counts a
    description only when it is persisted to the database)."""
    if not isinstance(declaration, dict):
        return declaration
    return {k: v for k, v in declaration.items() if k != "description"}


def _config(entry: dict[str, Any]) -> dict[str, Any]:
    config = dict(entry.get("config") or {})
    for key in _IGNORED_CONFIG:
        config.pop(key, None)
    return config
