"""Fixed sets of strings, typed. Each set is a ``Literal`` alias, defined once where its values
mean something, and the tuple of its values is read from that alias::

    SchemaDriftPolicy = Literal["fail", "append_new_columns", "evolve"]
    SCHEMA_DRIFT_POLICIES: tuple[SchemaDriftPolicy, ...] = get_args(SchemaDriftPolicy)

A value read from YAML, ``config()`` or the command line is checked with ``is_one_of``, which
also tells the type checker which alias it is; the caller raises its own error, with the file
and line it knows.
"""

from __future__ import annotations

from typing import TypeGuard, TypeVar

T = TypeVar("T")


def is_one_of(value: object, choices: tuple[T, ...]) -> TypeGuard[T]:
    """Whether ``value`` is one of ``choices``; narrows ``value`` to their type when it is."""
    return value in choices
