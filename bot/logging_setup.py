"""Logging configuration. Only ``bot/`` configures logging; every module uses ``logging.getLogger(__name__)``."""

from __future__ import annotations

import json
import logging
import sys
import time

from bot.settings import Settings

__all__ = ["JsonFormatter", "configure_logging"]

_RESERVED = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None)).keys()) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, plus any ``extra=`` fields (run_id, stage, …)."""

    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RESERVED and not key.startswith("_"):
                payload[key] = value
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, ensure_ascii=False, default=str)


def configure_logging(settings: Settings, *, quiet: bool = False) -> None:
    """Log to stderr. ``quiet`` (used by ``--json`` commands) keeps stdout clean and raises the level."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    if settings.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    level = logging.getLevelName(settings.log_level)
    if quiet and level < logging.WARNING:
        level = logging.WARNING
    root.setLevel(level)
    # Libraries that log request URLs (which contain bot tokens) stay at WARNING.
    for noisy in ("httpx", "httpcore", "telegram.ext.ExtBot", "apscheduler", "aiohttp.access"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))
