"""Static facts about a model's Jinja source, read from the Jinja syntax tree (no rendering).

The linter needs the line of a ``ref('x')`` call, of ``config(stream=...)`` and of its
``zorder_by`` argument, and the names a template uses but nobody defines. Rendering stops at the
first undefined name and does not say where a ``config`` argument was written; the syntax tree
knows both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import jinja2
from jinja2 import nodes

from runner.templating.context import ParseRecord, parse_mode_context

# Names Jinja itself provides inside templates and macros.
_JINJA_NAMES = frozenset(
    {*jinja2.Environment().globals, "loop", "caller", "varargs", "kwargs", "self", "super"}
)
_NOT_CONST = object()


@dataclass(frozen=True)
class TemplateCall:
    """A call of a global name: ``ref('x')``, ``dedupe(...)``, ``config(...)``."""

    name: str
    line: int
    args: tuple[Any, ...]  # constant arguments; a non-constant one is ``NOT_CONST``
    kwargs: dict[str, tuple[Any, int]] = field(default_factory=dict)  # key -> (value, line)


@dataclass(frozen=True)
class NameUse:
    """A global name read by the template (called or not), with its line."""

    name: str
    line: int
    called: bool


@dataclass(frozen=True)
class TemplateScan:
    calls: tuple[TemplateCall, ...] = ()
    names: tuple[NameUse, ...] = ()
    defined: frozenset[str] = frozenset()  # names the template defines itself

    def calls_of(self, name: str) -> list[TemplateCall]:
        return [call for call in self.calls if call.name == name]

    def config_line(self, key: str) -> int | None:
        """The line of ``key=...`` in the model's ``config(...)`` call."""
        for call in self.calls_of("config"):
            if key in call.kwargs:
                return call.kwargs[key][1]
        return None

    def config_value(self, key: str) -> Any:
        """The constant value of ``key=...`` in ``config(...)`` (``NOT_CONST`` when computed,
        None when absent)."""
        for call in self.calls_of("config"):
            if key in call.kwargs:
                return call.kwargs[key][0]
        return None


NOT_CONST = _NOT_CONST


@cache
def context_names() -> frozenset[str]:
    """The names every model can use (config, this, batch, ref, var, ...), as the parse-mode
    context gives them (the batch-mode one gives the same)."""
    context = parse_mode_context("m", ParseRecord(), project_vars={}, target_name="t")
    return frozenset(context) | _JINJA_NAMES


def scan_template(source: str) -> TemplateScan:
    """Parse ``source`` with Jinja and collect its global calls and name uses."""
    try:
        tree = jinja2.Environment().parse(source)
    except jinja2.TemplateSyntaxError:
        return TemplateScan()  # nothing to scan; the renderer reports the error (DL010)
    defined = {n.name for n in tree.find_all(nodes.Name) if n.ctx in ("store", "param")}
    defined |= {m.name for m in tree.find_all(nodes.Macro)}
    calls = []
    called_ids = set()
    for call in tree.find_all(nodes.Call):
        if not isinstance(call.node, nodes.Name):
            continue
        called_ids.add(id(call.node))
        calls.append(
            TemplateCall(
                name=call.node.name,
                line=call.lineno,
                args=tuple(_const(arg) for arg in call.args),
                kwargs={kw.key: (_const(kw.value), kw.lineno) for kw in call.kwargs},
            )
        )
    names = [
        NameUse(name=n.name, line=n.lineno, called=id(n) in called_ids)
        for n in tree.find_all(nodes.Name)
        if n.ctx == "load" and n.name not in defined
    ]
    return TemplateScan(calls=tuple(calls), names=tuple(names), defined=frozenset(defined))


def _const(node: nodes.Node) -> Any:
    try:
        return node.as_const()  # type: ignore[attr-defined]  # only Expr nodes reach here
    except nodes.Impossible:
        return _NOT_CONST
