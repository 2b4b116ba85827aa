"""The names a model template sees: one frozen ``TemplateInputs`` value, built once per render
by the mode's factory, becomes the dict by ``template_context``.

The same template is rendered in two modes (as dbt does with its parser and runtime contexts):

- ``parse_mode_context``, once when the project loads (and for lint's scan of the names):
  ``config(...)`` records the model's settings and ``ref(...)`` records dependencies. What
  depends on those settings (``this``, ``batch_columns``, ``target_columns``) is read when the
  template uses it, because ``config(...)`` runs during the same render; ``batch_stats``
  renders markers. Nothing here fails on what only a batch can know.
- batch mode (``runner.model_sql.batch_context``), once per micro-batch (and by ``runner
  compile``, set-up and maintenance): ``config(...)`` is a no-op, ``config.key`` reads the
  validated settings, and the per-batch overlay (``batch_id``, the ``batch`` view, ``this``,
  the batch's columns and measured ranges) describes the batch.

Both go through ``template_context``, so they return the same names: a template that renders in
one mode can name nothing the other lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from runner.ddl import column_names
from runner.errors import TemplateRaise
from runner.secrets import Secret, env_secret
from runner.specs.model import ModelConfig
from runner.templating.batch_facts import BatchStats


@dataclass(frozen=True)
class Relation:
    """A table reference rendered as its name (``{{ this }}`` -> ``silver.orders``)."""

    name: str

    def __str__(self) -> str:
        return self.name

    @property
    def schema(self) -> str:
        return self.name.rsplit(".", 1)[0] if "." in self.name else "default"

    @property
    def identifier(self) -> str:
        return self.name.rsplit(".", 1)[-1]


class PendingRelation:
    """``this`` in parse mode: the target is known only once ``config(...)`` has run."""

    def __init__(self, config: ConfigProxy, fallback: str) -> None:
        self._config = config
        self._fallback = fallback

    def __str__(self) -> str:
        return str(self._config.get("target") or self._fallback)

    @property
    def schema(self) -> str:
        return Relation(str(self)).schema

    @property
    def identifier(self) -> str:
        return Relation(str(self)).identifier


class ConfigProxy:
    """``config`` in a template: callable (``config(...)``) and readable (``config.key``)."""

    def __init__(self, config: ModelConfig | None = None) -> None:
        self._config = config
        self.recorded: dict[str, Any] = {}
        self.calls = 0

    def __call__(self, **kwargs: Any) -> str:
        if self._config is None:  # parse mode: record
            self.recorded.update(kwargs)
            self.calls += 1
        return ""

    def get(self, key: str, default: Any = None) -> Any:
        if self._config is not None:
            return self._config.get(key, default)
        if key in self.recorded:
            return self.recorded[key]
        return getattr(ModelConfig(), key, default)

    def __getattr__(self, key: str) -> Any:
        # AttributeError makes Jinja report "config has no attribute 'key'" (StrictUndefined)
        if key not in ModelConfig.field_names():
            raise AttributeError(key)
        return self.get(key)


class ColumnList(Sequence[str]):
    """Column names in parse mode (``batch_columns``, ``target_columns``), read when the
    template uses them: the ``config(...)`` that says which stream and which columns runs during
    the same render.

    Iterates, indexes, slices, has a ``len()`` and ``in``, adds to a list and renders like one.
    What is not known renders as ``PLACEHOLDER`` (``*``): every name when the stream's columns
    are not declared, and an index past the known names (a batch may have more columns). So
    parse mode never fails on a column list; each batch renders with the real names.
    """

    PLACEHOLDER = "*"

    def __init__(self, known: Callable[[], Sequence[str] | None]) -> None:
        self._known = known

    def names(self) -> list[str]:
        """The names known now (``[PLACEHOLDER]`` when none are)."""
        return list(self._known() or [self.PLACEHOLDER])

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        names = self.names()
        if isinstance(index, slice):
            return names[index]
        if not isinstance(index, int):
            raise TypeError(f"column list indices must be integers, not {type(index).__name__}")
        return names[index] if -len(names) <= index < len(names) else self.PLACEHOLDER

    def __len__(self) -> int:
        return len(self.names())

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __contains__(self, item: object) -> bool:
        return item in self.names()

    def __add__(self, other: Sequence[str]) -> list[str]:
        return self.names() + list(other)

    def __radd__(self, other: Sequence[str]) -> list[str]:
        return list(other) + self.names()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ColumnList | list | tuple):
            return self.names() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by value, like a list

    def __repr__(self) -> str:
        return repr(self.names())


@dataclass
class ParseRecord:
    """What rendering a model in parse mode records: the keywords of ``config(...)`` (in
    ``config.recorded``) and the models ``ref(...)`` names, in order."""

    config: ConfigProxy = field(default_factory=ConfigProxy)
    refs: list[str] = field(default_factory=list)

    def ref(self, name: str) -> Relation:
        self.refs.append(name)
        return Relation(f"__ref__{name}")


@dataclass(frozen=True)
class TemplateInputs:
    """What a model's template context is made of, in either mode: built once by the caller
    (``parse_mode_context`` when the project loads; ``runner.model_sql.batch_context`` and the
    seeds per batch) and turned into the names a template sees by ``template_context``."""

    model_name: str
    # batch mode: the validated settings (read-only); parse mode: the ConfigProxy that records
    config: ModelConfig | ConfigProxy
    # the target table; parse mode's is known once config() has run
    this: str | PendingRelation
    batch_id: int
    batch_view: str  # the temp view holding the batch
    batch_columns: Sequence[str]
    target_columns: Sequence[str]  # the target table's real ones inside a running batch
    batch_stats: BatchStats  # measured ranges inside a running batch, markers otherwise
    project_vars: Mapping[str, Any]
    target_name: str
    ref: Callable[[str], Relation]


def parse_mode_context(
    model_name: str,
    record: ParseRecord,
    *,
    project_vars: Mapping[str, Any],
    target_name: str,
    stream_columns: Callable[[str | None], Sequence[str] | None] = lambda stream: None,
) -> dict[str, Any]:
    """The context ``model_name`` renders with when the project loads; ``record`` collects
    what it calls ``config(...)`` and ``ref(...)`` with.

    ``stream_columns(stream)`` names the columns of the stream ``config(stream=...)`` chose, or
    None when they are not declared. ``target_columns`` are those of ``config(columns=...)``,
    else the stream's.
    """
    config = record.config

    def declared_target() -> Sequence[str]:
        ddl = config.get("columns")
        return column_names(ddl) if ddl else batch_columns.names()

    batch_columns = ColumnList(lambda: stream_columns(config.get("stream")))
    inputs = TemplateInputs(
        model_name=model_name,
        config=config,
        this=PendingRelation(config, model_name),
        batch_id=0,
        batch_view=f"{model_name}__batch",
        batch_columns=batch_columns,
        target_columns=ColumnList(declared_target),
        batch_stats=BatchStats(None, measured=None),
        project_vars=project_vars,
        target_name=target_name,
        ref=record.ref,
    )
    return template_context(inputs)


def _raise_error(message: str) -> None:
    raise TemplateRaise(message)


def template_context(inputs: TemplateInputs) -> dict[str, Any]:
    """Everything a model (and the macros it calls) can name, in either mode. In batch mode
    (a model or a set-up or maintenance macro, for one batch): ``config`` is the validated
    settings, ``this`` the target table, and the per-batch overlay ``batch_id``, the temp view
    holding the batch, the batch's column names, the target's and ``batch_stats``."""
    project_vars = inputs.project_vars
    config = inputs.config
    this = inputs.this

    def var(name: str, default: Any = _MISSING) -> Any:
        if name in project_vars:
            return project_vars[name]
        if default is _MISSING:
            raise TemplateRaise(
                f"var('{name}') is not defined: set it under 'vars:' in project.yml "
                f"or pass --vars '{{{name}: ...}}'"
            )
        return default

    def env_var(name: str, default: Any = _MISSING) -> Secret:
        # The value, shown as env_var('NAME') wherever it is written; one that is not set
        # fails only where Spark would receive it (runner/secrets.py).
        return env_secret(name, None if default is _MISSING else str(default))

    return {
        "config": config if isinstance(config, ConfigProxy) else ConfigProxy(config),
        "this": Relation(this) if isinstance(this, str) else this,
        "batch": inputs.batch_view,
        "batch_id": inputs.batch_id,
        "batch_columns": _column_list(inputs.batch_columns),
        "target_columns": _column_list(inputs.target_columns),
        "batch_stats": inputs.batch_stats,
        "model": {"name": inputs.model_name},
        "target": {"name": inputs.target_name},
        "var": var,
        "env_var": env_var,
        "ref": inputs.ref,
        "raise_error": _raise_error,
    }


def _column_list(columns: Sequence[str]) -> Sequence[str]:
    """Parse mode's ColumnList as it is (read when used); a batch's names as a list, which
    renders like one (``['id', 'v']``) whatever sequence the caller had."""
    return columns if isinstance(columns, ColumnList) else list(columns)


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()
