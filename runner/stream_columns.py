"""Report a column added to a stream's declared schema that a model's ``config(columns=...)``
leaves out of its target.

With ``columns=`` the target's columns are pinned, so a column added to the stream's schema
never reaches the target, and a schema-drift check never sees it (it is one of the model's
source-only columns, like an ``op`` flag). To tell a new one from the deliberate ones, each run
records the stream's declared columns beside the model's checkpoint
(``<checkpoints>/<model>.stream_columns``) and compares them at the next start. Pure Python:
runs before Spark, after the model's checkpoint lock is taken.
"""

from __future__ import annotations

import json

from runner import storage
from runner.ddl import column_names
from runner.project import Project
from runner.specs.model import ModelSpec


def new_unmapped_columns(project: Project, model: ModelSpec) -> str | None:
    """A warning naming the stream columns added since the model's last start that its
    ``config(columns=...)`` does not include; None when there are none. Records the columns."""
    stream = project.stream_of(model)
    ddl = project.stream_columns_ddl(stream)
    if not ddl:
        return None
    current = [c.strip("`") for c in column_names(ddl)]
    record = project.target.checkpoint_root / f"{model.name}.stream_columns"
    previous = json.loads(storage.read_text(record)) if storage.exists(record) else None
    storage.write_text(record, json.dumps(current))
    if previous is None or not model.config.columns:
        return None
    declared = {c.strip("`").lower() for c in column_names(model.config.columns)}
    known = {c.lower() for c in previous}
    added = [c for c in current if c.lower() not in known and c.lower() not in declared]
    if not added:
        return None
    return (
        f"{model.file}:{model.config_line_of('columns')}: stream '{stream.name}' declares new "
        f"column(s) {', '.join(added)} that config(columns=...) of model '{model.name}' leaves "
        f"out of {model.target_table}: add them to columns= to keep them"
    )
