"""Traces appended to a JSONL file that rotates at a size limit (``traces.jsonl`` → ``traces.jsonl.1`` …)."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["TelemetryWriter"]

logger = logging.getLogger(__name__)


class TelemetryWriter:
    """Append one JSON object per line; rotate when the file would exceed ``max_bytes`` (keeps ``backups`` old
    files). Blocking: async callers run ``write`` in an executor. ``redact(text)``, when given, is applied to every
    string of a record before it is written (``serve`` passes ``storage.privacy.mask_personal``: the question
    arrives masked from ChatService already, this also masks what the pipeline added, the pages' text included)."""

    def __init__(self, path: Path, max_bytes: int = 10_000_000, backups: int = 3,
                 redact: Callable[[str], str] | None = None) -> None:
        self.path = Path(path)
        self.redact = redact
        self.max_bytes = max_bytes
        self.backups = backups
        self._lock = threading.Lock()

    def _rotate(self) -> None:
        for i in range(self.backups - 1, 0, -1):
            src = self.path.with_name(f"{self.path.name}.{i}")
            if src.exists():
                os.replace(src, self.path.with_name(f"{self.path.name}.{i + 1}"))
        os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))

    def _redacted(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value) if self.redact else value
        if isinstance(value, dict):
            return {k: self._redacted(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._redacted(v) for v in value]
        return value

    def write(self, record: dict[str, Any]) -> None:
        if self.redact is not None:
            record = self._redacted(record)
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        data = line.encode("utf-8")
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                if self.path.exists() and self.path.stat().st_size + len(data) > self.max_bytes:
                    self._rotate()
                with self.path.open("ab") as fh:
                    fh.write(data)
            except OSError as error:  # telemetry must never break an answer
                logger.warning("could not write telemetry to %s: %s", self.path, error)
