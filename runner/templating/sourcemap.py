"""Map lines of rendered SQL back to lines of the Jinja template they came from.

Jinja does not say which template line produced which output line, so before rendering we append
an invisible marker (``\\ue000<line>\\ue001``) to the end of every template line whose end lies
in literal text. After rendering, the markers say which source line each output line ends; lines
without a marker (macro expansions, lines closed by a tag) belong to the next marked line, which
is the call site. The markers are stripped before the SQL is used.

Markers go before a line's trailing whitespace and never on a line that is blank or ends with a
tag, so whitespace control (``{%- ... -%}``) trims exactly what it would trim without them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPEN, _CLOSE = "\ue000", "\ue001"
_MARKER = re.compile(f"{_OPEN}(\\d+){_CLOSE}")
_TAG_START = re.compile(r"\{\{|\{%|\{#")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'" "|" r'"(?:[^"\\]|\\.)*"', re.DOTALL)  # as Jinja reads one


def add_line_markers(source: str) -> str:
    """Return ``source`` with a line marker at the end of each line of literal SQL."""
    tag_spans = tag_spans_of(source)
    out: list[str] = []
    span_index = 0
    offset = 0
    for number, line in enumerate(source.split("\n"), start=1):
        content = line.rstrip()
        end = offset + len(content)  # position just after the last non-blank character
        while span_index < len(tag_spans) and tag_spans[span_index][1] < end:
            span_index += 1
        in_or_ends_tag = span_index < len(tag_spans) and tag_spans[span_index][0] < end
        if content.strip() and not in_or_ends_tag:
            out.append(f"{content}{_OPEN}{number}{_CLOSE}{line[len(content) :]}")
        else:
            out.append(line)
        offset += len(line) + 1
    return "\n".join(out)


def tag_spans_of(source: str) -> list[tuple[int, int]]:
    """(start, end) of each Jinja tag in ``source``, ended where Jinja's lexer ends it: a
    comment at the first ``#}``; an expression or a statement at the first ``}}`` / ``%}`` that
    is outside string literals and outside the brackets it opened, so the ``}}`` closing a
    nested dict, as in ``config(expectations={'a': {'expect': 'x > 0'}})``, does not end it."""
    spans = []
    position = 0
    while (start := _TAG_START.search(source, position)) is not None:
        if start.group() == "{#":
            close = source.find("#}", start.end())
            end = len(source) if close < 0 else close + 2
        else:
            end = _end_of_tag(source, start.end(), "}}" if start.group() == "{{" else "%}")
        spans.append((start.start(), end))
        position = end
    return spans


def _end_of_tag(source: str, position: int, closer: str) -> int:
    depth = 0
    while position < len(source):
        char = source[position]
        if depth == 0 and source.startswith(closer, position):
            return position + len(closer)
        if char in "'\"":
            string = _STRING.match(source, position)
            if string is not None:
                position = string.end()
                continue
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        position += 1
    return len(source)


@dataclass(frozen=True)
class RenderedSql:
    """Rendered SQL text and, for each of its lines, the template line it came from."""

    text: str
    source_lines: tuple[int, ...]

    def source_line(self, rendered_line: int) -> int:
        """The template line (1-based) of a rendered line (1-based)."""
        if not self.source_lines:
            return 1
        index = min(max(rendered_line, 1), len(self.source_lines)) - 1
        return self.source_lines[index]


def strip_line_markers(marked: str) -> RenderedSql:
    """Remove the markers from rendered output and build its line map."""
    lines = marked.split("\n")
    found: list[int | None] = []
    for line in lines:
        numbers = _MARKER.findall(line)
        found.append(int(numbers[-1]) if numbers else None)
    # An unmarked line belongs to the next marked line (a macro's output ends at its call site).
    resolved: list[int] = []
    following: int | None = None
    for number in reversed(found):
        if number is not None:
            following = number
        resolved.append(following if following is not None else 0)
    resolved.reverse()
    last_seen = next((n for n in reversed(found) if n is not None), 1)
    source_lines = tuple(n if n else last_seen for n in resolved)
    return RenderedSql(text=_MARKER.sub("", marked), source_lines=source_lines)
