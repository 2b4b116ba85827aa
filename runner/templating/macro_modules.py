"""The macros every render calls by name, their Jinja modules built once per thread, not per render.

Building a Jinja module runs its macro file's top-level code and creates its ``Macro`` objects;
doing that for every macro file on every render was most of what rendering cost. A macro reads
the names of the render (``this``, ``batch``, ``config``, other macros, ...) when it is called,
from its module's context, so a module is built once over a scope dict (its context's parent,
shared, not copied) whose contents are replaced at the start of each render.

Built per rendering thread, since streaming queries render their batches in their own threads.
A macro file whose top level does more than define macros (``{% set %}``, ``{% import %}``, ...)
may read the render's names while its module is built, so it is built again for every render,
as is every module of a render started while another is under way in the same thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import jinja2
from jinja2 import nodes


class MacroRef:
    """Stands in for a macro by name: calls whatever ``registry`` holds under that name when
    it is called, so macros of one file can call those of files built after it."""

    def __init__(self, registry: dict[str, Any], name: str) -> None:
        self._registry = registry
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._registry[self._name](*args, **kwargs)


def defines_only_macros(tree: nodes.Template) -> bool:
    """True when a macro file's top level is macro definitions and literal text only, so that
    building its module reads none of the render's names."""
    return all(
        isinstance(node, nodes.Macro)
        or (
            isinstance(node, nodes.Output)
            and all(isinstance(child, nodes.TemplateData) for child in node.nodes)
        )
        for node in tree.body
    )


@dataclass
class _ThreadState:
    """One thread's modules: the scope they resolve names in, the macros by name, and for each
    macro file its macros (None for a file built again for every render)."""

    scope: dict[str, Any] = field(default_factory=dict)
    registry: dict[str, Any] = field(default_factory=dict)
    refs: dict[str, MacroRef] = field(default_factory=dict)
    built: list[dict[str, Any] | None] | None = None
    registry_ready: bool = False  # every file built once: the registry stays as it is
    rendering: bool = False


class MacroModules:
    """The macro files of an environment, in the order their macros override each other (a
    later file's macro of the same name wins)."""

    def __init__(
        self,
        env: jinja2.Environment,
        template_names: list[str],
        static: list[bool],
        macro_names: list[str],
    ) -> None:
        self._env = env
        self._template_names = template_names
        self._static = static  # per file: defines only macros, so built once per thread
        self._macro_names = macro_names
        self._local = threading.local()

    @contextmanager
    def bound(self, context: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """``context`` plus every macro by name, for one render (model or macro call) in the
        calling thread. The macros see ``context`` until the block ends."""
        state = self._state()
        if state.rendering:  # a render inside a render: its own modules, as the first had
            yield self._bind_fresh(context)
            return
        state.rendering = True
        try:
            full = {**context, **state.refs}
            state.scope.clear()
            state.scope.update(self._env.globals)
            state.scope.update(full)
            if state.built is None:
                state.built = [
                    _macros_of(self._module(name, state.scope, shared=True)) if static else None
                    for name, static in zip(self._template_names, self._static, strict=True)
                ]
                state.registry_ready = False
            if not state.registry_ready:
                state.registry.clear()
                for name, macros in zip(self._template_names, state.built, strict=True):
                    # a file that does more than define macros: built over this render's names
                    built = macros if macros is not None else _macros_of(self._module(name, full))
                    state.registry.update(built)
                state.registry_ready = all(macros is not None for macros in state.built)
            yield full
        finally:
            state.rendering = False

    def _state(self) -> _ThreadState:
        state: _ThreadState | None = getattr(self._local, "state", None)
        if state is None:
            state = _ThreadState()
            state.refs = {name: MacroRef(state.registry, name) for name in self._macro_names}
            self._local.state = state
        return state

    def _bind_fresh(self, context: Mapping[str, Any]) -> dict[str, Any]:
        registry: dict[str, Any] = {}
        full = {**context, **{name: MacroRef(registry, name) for name in self._macro_names}}
        for name in self._template_names:
            registry.update(_macros_of(self._module(name, full)))
        return full

    def _module(
        self, template_name: str, variables: dict[str, Any], shared: bool = False
    ) -> jinja2.environment.TemplateModule:
        return self._env.get_template(template_name).make_module(variables, shared=shared)


def _macros_of(module: jinja2.environment.TemplateModule) -> dict[str, Any]:
    return {
        name: value
        for name in dir(module)
        if isinstance(value := getattr(module, name), jinja2.runtime.Macro)
    }
