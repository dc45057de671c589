"""The ``/status`` text (``ChatService.format_status``): index version, last crawl time, queue depth."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["format_status"]


def format_status(data: dict[str, Any], queue_depth: Callable[[], int] | None = None) -> str:
    """The status lines from the status provider's ``data`` (``index``, ``runs``, ``queue_depth``); without a
    ``queue_depth`` in it, ``queue_depth()`` is asked (0 when neither tells)."""
    raw_index, raw_runs = data.get("index"), data.get("runs")
    index: dict[str, Any] = raw_index if isinstance(raw_index, dict) else {}
    runs: list[Any] = raw_runs if isinstance(raw_runs, list) else []
    version = index.get("version") or "belum ada"
    chunks = index.get("chunks")
    lines = ["Status layanan:"]
    lines.append(f"• Versi indeks: {version}" + (f" ({chunks} potongan teks)" if chunks is not None else ""))
    last_crawl = index.get("last_crawl") or index.get("built_at")
    for run in runs:
        if isinstance(run, dict) and str(run.get("status", "")).lower() in ("ok", "success", "succeeded"):
            last_crawl = run.get("ended_at") or run.get("finished_at") or run.get("started_at") or last_crawl
            break
    lines.append(f"• Situs terakhir diperbarui: {last_crawl or 'belum pernah'}")
    depth = data.get("queue_depth")
    if depth is None and queue_depth is not None:
        try:
            depth = queue_depth()
        except Exception:  # pragma: no cover - defensive; boundary: a failing queue probe must not cost the status
            depth = None
    lines.append(f"• Antrean pertanyaan: {depth if depth is not None else 0}")
    return "\n".join(lines)
