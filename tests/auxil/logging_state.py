"""Undo what ``bot.logging_setup.configure_logging`` did to the process's loggers, for tests that configure it."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

__all__ = ["logging_restored"]


@contextlib.contextmanager
def logging_restored() -> Iterator[logging.Logger]:
    """The root logger; on exit its handlers (closing the ones added inside) and every logger's level are as before."""
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    saved_levels = {name: lg.level for name, lg in logging.root.manager.loggerDict.items()
                    if isinstance(lg, logging.Logger)}
    try:
        yield root
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
            if handler not in saved_handlers:
                handler.close()
        for handler in saved_handlers:
            root.addHandler(handler)
        root.setLevel(saved_level)
        for name, lg in logging.root.manager.loggerDict.items():
            if isinstance(lg, logging.Logger):
                lg.setLevel(saved_levels.get(name, logging.NOTSET))
