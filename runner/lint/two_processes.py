"""Share a list of work between this process and one forked child, on a machine with two cores
or more: the child inherits everything already loaded (the project, its compiled templates),
does every other item and sends its result back through a pipe, pickled.

Used by the linter, whose work per model (render, parse, rules) is independent of the other
models'. Forking is skipped, and the whole list done here, when it cannot help or is not safe:
no ``os.fork`` (Windows), one CPU, few items, or other threads running (a fork copies only the
calling thread, so a lock another thread holds would stay locked in the child). If the child
fails in any way, this process does its share too: the result is the same either way.
"""

from __future__ import annotations

import gc
import os
import pickle
import threading
from collections.abc import Callable
from typing import NoReturn, TypeVar

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS = 8  # below this, forking and pickling cost about what the child would save


def can_fork(items: int, min_items: int | None = None) -> bool:
    """Would ``in_two_processes`` fork for ``items`` items here and now?"""
    return (
        hasattr(os, "fork")
        and _cpus() >= 2
        and items >= (MIN_ITEMS if min_items is None else min_items)
        and threading.active_count() == 1
    )


def _cpus() -> int:
    """The CPUs this process may run on (fewer than the machine's in a limited container)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def in_two_processes(
    work: Callable[[list[T]], R], items: list[T], min_items: int | None = None
) -> list[R]:
    """``work`` of the even-indexed items (here) and of the odd-indexed ones (in a forked
    child, when ``can_fork``); else ``[work(items)]``. Interleaved, so each half gets a share
    of every kind of item."""
    if not can_fork(len(items), min_items):
        return [work(items)]
    mine, theirs = items[0::2], items[1::2]
    read_end, write_end = os.pipe()
    gc.freeze()  # the child's collector then leaves the inherited objects (and their pages) be
    try:
        pid = os.fork()
    except OSError:
        gc.unfreeze()
        os.close(read_end)
        os.close(write_end)
        return [work(items)]
    if pid == 0:  # the child: never returns
        _child(work, theirs, read_end, write_end)
    gc.unfreeze()
    os.close(write_end)
    payload = b""
    pipe = os.fdopen(read_end, "rb")
    try:
        result = work(mine)
        payload = pipe.read()
    finally:
        pipe.close()  # first: a child still writing then fails instead of waiting forever
        _, status = os.waitpid(pid, 0)
    if status == 0 and payload:
        try:
            return [result, pickle.loads(payload)]
        except Exception:  # noqa: BLE001 - a broken payload: do the child's share here
            pass
    return [result, work(theirs)]


def _child(work: Callable[[list[T]], R], items: list[T], read_end: int, write_end: int) -> NoReturn:
    code = 1
    try:
        os.close(read_end)
        data = pickle.dumps(work(items), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)
        code = 0
    finally:
        os._exit(code)  # no atexit handlers, no flushing of the parent's buffered output
