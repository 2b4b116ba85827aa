"""Retrying the Spark errors a concurrent writer causes. (Reading an error's message, the JVM's
own for a Spark error, is runner/error_text.py.)"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException

from runner.error_text import error_text, first_line

T = TypeVar("T")

# Delta's optimistic concurrency: another writer committed first (an OPTIMIZE from another
# process, say). Running the statement again on the new version is the documented remedy.
CONFLICT_MARKERS = (
    "DELTA_CONCURRENT_",
    "DELTA_METADATA_CHANGED",
    "DELTA_PROTOCOL_CHANGED",
    "ConcurrentAppendException",
    "ConcurrentDeleteReadException",
    "ConcurrentDeleteDeleteException",
    "ConcurrentTransactionException",
    "MetadataChangedException",
    "ProtocolChangedException",
)
CONFLICT_ATTEMPTS = 4
CONFLICT_BACKOFF_SECONDS = 0.5


class ConflictRetriesExhausted(Exception):
    """Still conflicting with concurrent writers after every attempt; carries the last cause."""

    def __init__(self, attempts: int, cause: BaseException) -> None:
        super().__init__(f"still conflicting after {attempts} attempts: {first_line(cause)}")
        self.attempts = attempts
        self.cause = cause


def is_conflict(exc: BaseException) -> bool:
    text = error_text(exc)
    return any(marker in text for marker in CONFLICT_MARKERS)


def retry_on_conflict(
    action: Callable[[], T],
    *,
    attempts: int = CONFLICT_ATTEMPTS,
    backoff: float | None = None,
    on_retry: Callable[[int, BaseException], None] | None = None,
) -> T:
    """Run ``action``; when a concurrent Delta commit makes it fail, wait (exponential backoff
    with jitter, from ``backoff`` or CONFLICT_BACKOFF_SECONDS) and run it again, ``attempts``
    times at most. Other errors pass straight on."""
    backoff = CONFLICT_BACKOFF_SECONDS if backoff is None else backoff
    for attempt in range(1, attempts + 1):
        try:
            return action()
        except (PySparkException, Py4JError) as exc:
            if not is_conflict(exc):
                raise
            if attempt == attempts:
                raise ConflictRetriesExhausted(attempts, exc) from exc
            if on_retry is not None:
                on_retry(attempt, exc)
            time.sleep(backoff * 2 ** (attempt - 1) * (1 + random.random() / 2))
    raise AssertionError("unreachable")
