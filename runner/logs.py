"""Logging helpers shared by the pure and the Spark half."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def logger_level(logger: logging.Logger, level: int) -> Iterator[None]:
    """Set ``logger``'s level for the duration of a block, then put the old one back."""
    previous = logger.level
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(previous)
