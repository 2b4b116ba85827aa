"""The names a model template sees, built by one function that returns a dict.

The same template is rendered in two modes (as dbt does):

- *parse* mode, once when the project loads: ``config(...)`` records the model's settings and
  ``ref(...)`` records dependencies;
- *batch* mode, once per micro-batch (and by ``runner compile``): ``config(...)`` is a no-op,
  ``config.key`` reads the validated settings, and ``batch_id`` / ``batch`` describe the batch.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from runner.config import ModelConfig
from runner.errors import TemplateRaise
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


def _raise_error(message: str) -> None:
    raise TemplateRaise(message)


def model_context(
    *,
    model_name: str,
    config: ConfigProxy,
    this: Relation | PendingRelation,
    batch_id: int,
    batch_view: str,
    project_vars: Mapping[str, Any],
    target_name: str,
    ref: Callable[[str], Relation],
    columns: list[str],
    target_columns: list[str] | None = None,
    batch_stats: Any = None,
) -> dict[str, Any]:
    """Everything a model (and the macros it calls) can name.

    ``target_columns`` defaults to the columns config(columns=...) declares, else ``columns``;
    ``batch_stats`` is the batch's measured ranges (runner.templating.batch_facts.BatchStats).
    """

    def var(name: str, default: Any = _MISSING) -> Any:
        if name in project_vars:
            return project_vars[name]
        if default is _MISSING:
            raise TemplateRaise(
                f"var('{name}') is not defined: set it under 'vars:' in project.yml "
                f"or pass --vars '{{{name}: ...}}'"
            )
        return default

    def env_var(name: str, default: Any = _MISSING) -> Any:
        if name in os.environ:
            return os.environ[name]
        if default is _MISSING:
            raise TemplateRaise(f"environment variable {name} is not set and has no default")
        return default

    return {
        "config": config,
        "this": this,
        "batch": batch_view,
        "batch_id": batch_id,
        "batch_columns": columns,
        "target_columns": target_columns
        if target_columns is not None
        else _DeclaredTargetColumns(config, columns),
        "batch_stats": batch_stats if batch_stats is not None else _parse_mode_stats(),
        "model": {"name": model_name},
        "target": {"name": target_name},
        "var": var,
        "env_var": env_var,
        "ref": ref,
        "raise_error": _raise_error,
    }


def _parse_mode_stats() -> Any:
    return BatchStats(None, measured=None)


class _DeclaredTargetColumns(list):
    """``target_columns`` when the runner did not pass them (parse mode): read lazily, because
    in parse mode ``config(columns=...)`` has not run yet when the context is built."""

    def __init__(self, config: ConfigProxy, fallback: list[str]) -> None:
        super().__init__()
        self._config, self._fallback = config, fallback

    def _names(self) -> list[str]:
        from runner.ddl import column_names

        ddl = self._config.get("columns")
        return column_names(ddl) if ddl else list(self._fallback)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, item: object) -> bool:
        return item in self._names()


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()
