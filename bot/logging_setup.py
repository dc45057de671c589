"""Logging configuration. Only ``bot/`` configures logging; every module uses ``logging.getLogger(__name__)``.

Where log lines go:

- always to ``DATA_DIR/logs/prodi-bot.log``: one JSON object a line (time, level, logger, message and any
  ``extra=`` fields such as ``run_id`` and ``stage``), rotated at 10 MB, three old files kept;
- ``serve``: also to stdout, which is what Docker, journald or a Loki agent collect (JSON with ``LOG_FORMAT=json``,
  the default; ``serve --json`` keeps stdout for its own JSON and logs to stderr);
- every other command: only warnings and errors on stderr, so the console chat and progress bars stay readable
  (``chat`` shows only errors); the INFO lines are in the file.

``LOG_LEVEL=DEBUG`` is for the project's own modules. Libraries stay at INFO or above whatever the level: at DEBUG
python-telegram-bot logs every update and Bot API call, pywa every Graph API request and its recipient, httpx and
httpcore the requests (user ids, phone numbers, message text, bot tokens in URLs). Their loggers are set to INFO (the
ones that log URLs with tokens at INFO to WARNING), and both handlers drop any other library's DEBUG line.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import sys
import time
from pathlib import Path

from bot.settings import Settings

__all__ = ["JsonFormatter", "LOG_FILE_NAME", "OWN_PACKAGES", "LibraryDebugFilter", "configure_logging",
           "log_file_path"]

LOG_FILE_NAME = "prodi-bot.log"
# the packages whose DEBUG lines LOG_LEVEL=DEBUG shows; every other logger is a library's
OWN_PACKAGES = frozenset({"bot", "handlers", "generation", "retrieval", "storage", "sync_jobs", "bench", "__main__"})
# libraries that log request URLs (which contain bot tokens) at INFO: WARNING at least
_TOKEN_URLS = ("httpx", "httpcore", "telegram.ext.ExtBot", "apscheduler", "aiohttp.access")
# libraries that log updates, API calls and requests (user ids, numbers, message text) at DEBUG: INFO at least
_USER_DATA = ("telegram", "pywa", "aiohttp", "urllib3", "hpack", "h11", "redis", "asyncio")
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


class LibraryDebugFilter(logging.Filter):
    """Drops the DEBUG lines of every logger outside ``OWN_PACKAGES`` (a library nobody listed in ``_USER_DATA``
    included), so LOG_LEVEL=DEBUG never writes a user's id, number or message as a library logs it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.INFO or record.name.split(".", 1)[0] in OWN_PACKAGES


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
    file_handler.addFilter(LibraryDebugFilter())
    root.addHandler(file_handler)

    if command == "serve":
        console = logging.StreamHandler(sys.stderr if quiet else sys.stdout)
        console.setLevel(max(level, logging.WARNING) if quiet else level)
        console.setFormatter(JsonFormatter() if settings.log_format == "json" else _text())
    else:
        console = logging.StreamHandler(sys.stderr)
        console.setLevel(logging.ERROR if command == "chat" else max(level, logging.WARNING))
        console.setFormatter(_text())  # a person reads this console; the file has the JSON
    console.addFilter(LibraryDebugFilter())
    root.addHandler(console)
    for name in _USER_DATA:
        logging.getLogger(name).setLevel(max(level, logging.INFO))
    for name in _TOKEN_URLS:
        logging.getLogger(name).setLevel(max(level, logging.WARNING))
