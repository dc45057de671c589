"""Console progress bars for long commands (``crawl``, ``index``, ``reindex``, the first index of ``chat``/``ask``).

A bar appears only on a terminal: when stdout or stderr is not a TTY, or with ``--json``, nothing extra is printed
(``console_progress`` returns None). The bar is drawn by tqdm on stderr, one line per stage: pages crawled out of
the pages known so far, chunks embedded out of all chunks, each with its rate and ETA.
"""

from __future__ import annotations

import shutil
import sys
import threading
from typing import Any, TextIO

__all__ = ["ConsoleProgress", "console_progress"]

_LABELS = {
    "prepare": "Persiapan",
    "crawl": "Perayapan",
    "chunk": "Pemotongan teks",
    "validate": "Validasi",
    "embed": "Embedding",
    "index": "Membangun indeks",
    "promote": "Menyimpan",
}
_UNITS = {"crawl": "halaman", "embed": "potongan"}


class ConsoleProgress:
    """``progress(stage, done, total)``: one tqdm bar per stage, safe to call from several threads."""

    def __init__(self, file: TextIO | None = None) -> None:
        self.file = file if file is not None else sys.stderr
        self._lock = threading.Lock()
        self._stage: str | None = None
        self._bar: Any = None

    def __call__(self, stage: str, done: int = 0, total: int | None = None) -> None:
        from tqdm import tqdm

        with self._lock:
            if stage != self._stage:
                self._close_bar()
                self._stage = stage
                label = _LABELS.get(stage, stage)
                if stage in _UNITS:
                    self._bar = tqdm(total=total, desc=label, unit=f" {_UNITS[stage]}", file=self.file,
                                     ncols=_columns(), nrows=_rows(), leave=True, mininterval=0.2)
                else:
                    self._bar = tqdm(total=None, desc=label, file=self.file, leave=True, mininterval=0.2,
                                     ncols=_columns(), nrows=_rows(), bar_format="{desc}: {elapsed}")
            bar = self._bar
            if bar is None:
                return
            if total is not None and bar.total != total:
                bar.total = total
            if done > bar.n:
                bar.update(done - bar.n)
            else:
                bar.refresh()

    def _close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def close(self) -> None:
        with self._lock:
            self._close_bar()
            self._stage = None

    def __enter__(self) -> ConsoleProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _columns() -> int:
    """The terminal's width (COLUMNS, the terminal, or 80 when it reports none: a fresh pty says 0x0)."""
    return max(40, min(shutil.get_terminal_size((80, 24)).columns, 120))


def _rows() -> int:
    # tqdm hides bars below the terminal's last row, and a terminal that reports 0 rows would hide them all
    return max(10, shutil.get_terminal_size((80, 24)).lines)


def console_progress(json_output: bool = False) -> ConsoleProgress | None:
    """A progress bar when both stdout and stderr are terminals and the output is not ``--json``; else None."""
    if json_output:
        return None
    try:
        if not (sys.stdout.isatty() and sys.stderr.isatty()):
            return None
    except (AttributeError, ValueError):
        return None
    return ConsoleProgress()
