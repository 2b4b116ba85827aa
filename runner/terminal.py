"""The rich consoles the runner prints through: text comes out exactly as it went in.

Messages quote SQL, paths and values. Rich's markup would read ``[idx]`` of ``s.items[idx]`` as
a tag and drop it, and its emoji codes would turn ``a:cd:b`` into a disc, so both are off;
``rich.markup.escape`` is not enough (it leaves emoji codes and doubles a trailing backslash).
Colour comes from ``Text`` and ``style=``, never from markup inside a string:

    console.print(Text.assemble(("warning:", "yellow"), " ", message))
"""

from __future__ import annotations

from typing import Any

from rich.console import Console


def plain_console(**options: Any) -> Console:
    """A Console that prints strings as they are: no markup, no emoji codes, no highlighting.
    ``options`` go to Console (``stderr=True``, ``file=``, ``width=`` ...)."""
    return Console(markup=False, emoji=False, highlight=False, **options)
