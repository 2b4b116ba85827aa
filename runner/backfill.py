"""`runner backfill`: rebuild a model's history through its SQL as it is now, beside the live
target, and bring the live target to that state with only the difference.

The steps, each safe to repeat after a SIGKILL (the design note is docs/changing-a-model.md,
"How backfill works"):

1. **Shadow build.** The model runs as a shadow model ``<model>__backfill`` into the table
   ``<target>__backfill`` (beside the live one) with its own checkpoint
   ``<checkpoints>/<model>__backfill``: the same SQL, macros and idempotent writes, reading the
   source from its earliest data. A kill resumes from the shadow's checkpoint; a shadow built
   by other SQL than the model's now (its recorded fingerprint differs) is built again.
2. **Difference** per ``unique_key``: rows only in the live target, only in the shadow, changed
   (per column). A dry run stops here.
3. **Apply** (``--apply``, the live model's checkpoint lock held): the shadow catches up with
   the source, then one MERGE of the difference into the live target under Delta's
   idempotent-write identity ``runner-backfill:<model>:<shadow query id>`` / the shadow's batch
   count, so a rerun after the commit skips it.
4. **Handover**: the shadow's checkpoint becomes the live model's (staged as a complete copy
   with the live model's owner and last-run records, then swapped in by two renames), so the
   live model resumes where the shadow stopped: every batch the shadow read is in the target,
   none is read twice. A marker in the staged copy (``runner_backfill.json``) says which shadow
   it came from; a rerun that finds it finishes the swap and the clean-up, and stops.
5. **Clean-up**: the shadow table is dropped, then its checkpoint deleted.

Pure Python: names, the shadow's project, the checkpoint handover. Spark's part is
runner/spark/backfill.py; the report is runner/backfill_report.py.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from runner.checkpoint_files import checkpoint_query_id
from runner.checkpoint_owner import OwnerRecord, write_owner
from runner.errors import ConfigError
from runner.last_run import write_last_run
from runner.project import Project
from runner.specs.model import ModelSpec
from runner.storage import Location, RemotePath

SHADOW_SUFFIX = "__backfill"
HANDOVER_FILE = "runner_backfill.json"  # in a checkpoint made from a shadow's
STAGED_SUFFIX = "__backfill_handover"  # the shadow's checkpoint, copied, before the swap
REPLACED_SUFFIX = "__before_backfill"  # the live checkpoint the last handover replaced
APP_ID_PREFIX = "runner-backfill"


@dataclass(frozen=True)
class BackfillPaths:
    """Where one model's backfill keeps its state."""

    live: Path  # the live model's checkpoint
    shadow: Path  # the shadow model's checkpoint
    staged: Path  # the shadow's checkpoint copied for the handover
    replaced: Path  # the live checkpoint as it was before the last handover

    @classmethod
    def of(cls, root: Location, model_name: str) -> BackfillPaths:
        """The paths of ``model_name``'s backfill under the checkpoint root ``root``, which
        must be on a local disk: the handover renames checkpoint folders, which object storage
        cannot do in one step (S3A copies each file, then deletes it)."""
        if isinstance(root, RemotePath):
            raise ConfigError(
                f"runner backfill hands a checkpoint over by renaming folders, which object "
                f"storage cannot do in one step; the checkpoints of this target are at {root}",
                hint="backfill on a target whose checkpoints are on a disk the driver reaches, "
                "or rebuild the model with --full-refresh",
            )
        return cls(
            live=root / model_name,
            shadow=root / shadow_name(model_name),
            staged=root / f"{model_name}{STAGED_SUFFIX}",
            replaced=root / f"{model_name}{REPLACED_SUFFIX}",
        )


def shadow_name(model_name: str) -> str:
    return f"{model_name}{SHADOW_SUFFIX}"


def shadow_table(table: str) -> str:
    """``silver.orders`` -> ``silver.orders__backfill``: beside the live table, same schema."""
    return f"{table}{SHADOW_SUFFIX}"


def backfill_model(project: Project, name: str) -> ModelSpec:
    """The model ``name``, checked to be one backfill can rebuild: it has a ``unique_key``
    (the difference is per key), is not itself a shadow, and the target is not Spark Connect."""
    model = project.model(name)
    if project.target.kind == "connect":  # the server loads models by name: no shadow there
        raise ConfigError(
            f"backfill does not run over Spark Connect yet (target {project.target.name})",
            hint="run it with a target whose master is local or a cluster, on the same "
            "warehouse and checkpoints",
        )
    if name.endswith(SHADOW_SUFFIX):
        raise ConfigError(
            f"model '{name}' is a backfill's shadow name",
            hint=f"run backfill on the model itself: --model {name.removesuffix(SHADOW_SUFFIX)}",
        )
    if not model.config.unique_keys:
        raise ConfigError(
            f"model '{name}' has no unique_key: backfill compares the live target with the "
            "shadow key by key",
            file=model.file,
            line=model.config_line,
            hint="set config(unique_key=...) to the column(s) that identify a row of the target",
        )
    return model


def shadow_project(project: Project, model: ModelSpec) -> tuple[Project, ModelSpec]:
    """The project with the shadow of ``model`` added: the same template, stream, macros and
    config, another name (so its own checkpoint, batch view, event-log rows and quarantine
    table) and another target table."""
    shadow = replace(
        model,
        name=shadow_name(model.name),
        config=replace(model.config, target=shadow_table(model.target_table)),
    )
    # the template is looked up by model name: the shadow renders the model's own file
    templates = {**project._template_names, shadow.name: project.template_name(model)}
    widened = replace(
        project, models={**project.models, shadow.name: shadow}, _template_names=templates
    )
    return widened, shadow


def apply_app_id(model_name: str, shadow_query_id: str) -> str:
    """The idempotent-write app id of the apply MERGE for one shadow (its query id: a shadow
    built again is another app)."""
    return f"{APP_ID_PREFIX}:{model_name}:{shadow_query_id}"


def handover_marker(checkpoint: Path) -> dict[str, Any] | None:
    """What a checkpoint made from a shadow says about that shadow; None when it was not."""
    try:
        found = json.loads((checkpoint / HANDOVER_FILE).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def stage_handover(
    paths: BackfillPaths, owner: OwnerRecord, last_run: dict[str, Any], marker: dict[str, Any]
) -> None:
    """Copy the shadow's checkpoint to ``paths.staged`` as the live model's: its owner record
    and its last-run record are the live model's, and the marker, written last, makes the copy
    complete. A half-made copy (a kill) is made again."""
    if handover_marker(paths.staged) is not None:
        return
    if paths.staged.exists():
        shutil.rmtree(paths.staged)
    shutil.copytree(paths.shadow, paths.staged)
    write_owner(paths.staged, owner)
    write_last_run(paths.staged, last_run)
    _write_atomically(paths.staged / HANDOVER_FILE, marker)


def finish_handover(paths: BackfillPaths) -> bool:
    """Swap a complete staged checkpoint in for the live one (the live one is kept as
    ``paths.replaced``). Returns False when there is nothing staged. Two renames, each of which
    a rerun redoes or skips: a kill leaves the live checkpoint in place, or moved aside with the
    staged one ready."""
    if handover_marker(paths.staged) is None:
        return False
    if paths.live.exists():
        if paths.replaced.exists():
            shutil.rmtree(paths.replaced)
        os.replace(paths.live, paths.replaced)
    os.replace(paths.staged, paths.live)
    return True


def handed_over(paths: BackfillPaths) -> bool:
    """Whether the live checkpoint already is the one made from the shadow now in
    ``paths.shadow`` (a kill came after the swap, before the clean-up)."""
    marker = handover_marker(paths.live)
    shadow = checkpoint_query_id(paths.shadow)
    return marker is not None and shadow is not None and marker.get("shadow_query_id") == shadow


def _write_atomically(path: Path, content: dict[str, Any]) -> None:
    temp = path.with_name(f".{path.name}.tmp")
    with open(temp, "w", encoding="utf-8") as out:
        json.dump(content, out, indent=2, sort_keys=True)
        out.write("\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(temp, path)
