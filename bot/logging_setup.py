"""Logging configuration. Only ``bot/`` configures logging; every module uses ``logging.getLogger(__name__)``.

Where log lines go:

- always to ``DATA_DIR/logs/prodi-bot.log``: one JSON object a line (time, level, logger, message and any
  ``extra=`` fields such as ``run_id`` and ``stage``), rotated at 10 MB, three old files kept;
- ``serve``: also to stdout, which is what Docker, journald or a Loki agent collect (JSON with ``LOG_FORMAT=json``,
  the default; ``serve --json`` keeps stdout for its own JSON and logs to stderr);
- every other command: only warnings and errors on stderr, so the console chat and progress bars stay readable
  (``chat`` shows only errors); the INFO lines are in the file.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import sys
import time
from pathlib import Path

from bot.settings import Settings

__all__ = ["JsonFormatter", "LOG_FILE_NAME", "configure_logging", "log_file_path"]

LOG_FILE_NAME = "prodi-bot.log"
_MAX_BYTES = 10_000_000
_BACKUPS = 3
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


class _LazyRotatingFile(logging.handlers.RotatingFileHandler):
    """A rotating file whose directory (and file) are created at the first record, not at start-up."""

    def _open(self):  # type: ignore[no-untyped-def]
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        # an unwritable DATA_DIR must not stop the bot, nor print a traceback per record: say it once
        if not getattr(self, "_warned", False):
            self._warned = True
            print(f"warning: cannot write the log file {self.baseFilename}; logging to it stopped",
                  file=sys.stderr)


def log_file_path(settings: Settings) -> Path:
    return settings.data_dir / "logs" / LOG_FILE_NAME


def _text() -> logging.Formatter:
    return logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")


def configure_logging(settings: Settings, *, quiet: bool = False, command: str | None = None) -> None:
    """Log to the JSON log file and to the console as the module docstring says. ``quiet`` (``--json``) keeps
    stdout clean for the command's own output."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    level = logging.getLevelName(settings.log_level)
    root.setLevel(level)

    file_handler = _LazyRotatingFile(log_file_path(settings), maxBytes=_MAX_BYTES, backupCount=_BACKUPS,
                                     encoding="utf-8", delay=True)
    file_handler.setFormatter(JsonFormatter())
    file_handler.setLevel(level)
    root.addHandler(file_handler)

    if command == "serve":
        console = logging.StreamHandler(sys.stderr if quiet else sys.stdout)
        console.setLevel(max(level, logging.WARNING) if quiet else level)
        console.setFormatter(JsonFormatter() if settings.log_format == "json" else _text())
    else:
        console = logging.StreamHandler(sys.stderr)
        console.setLevel(logging.ERROR if command == "chat" else max(level, logging.WARNING))
        console.setFormatter(_text())  # a person reads this console; the file has the JSON
    root.addHandler(console)
    # Libraries that log request URLs (which contain bot tokens) stay at WARNING.
    for noisy in ("httpx", "httpcore", "telegram.ext.ExtBot", "apscheduler", "aiohttp.access"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))
