"""What maintainers read about reindex runs: the admin run page, live progress, trends and ``python -m bot runs``.

Everything here is computed from the run store (``storage.runs``: one record and its JSON log lines per run) and
the index's own ``params.json``; the job itself never formats anything for people. Labels are Indonesian, numbers
use Indonesian separators ("4,2 s", "1.234"), sizes are binary ("446 KB") and times are shown in ``TIMEZONE``.
The blocking functions read SQLite; ``RunViews`` runs them in an executor for the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from storage.runs import JobRun, RunStore

__all__ = [
    "RunViews",
    "fmt_bytes",
    "fmt_duration",
    "fmt_int",
    "fmt_time",
    "index_facts",
    "live_progress",
    "run_announcements",
    "run_detail",
    "run_rows",
    "trend",
]

# The job's stages in the order they run, with their Indonesian labels ("extract" happens inside the crawl).
STAGES: tuple[tuple[str, str], ...] = (
    ("prepare", "Persiapan"),
    ("crawl", "Perayapan & ekstraksi"),
    ("chunk", "Pemotongan teks"),
    ("validate", "Validasi (katup pengaman)"),
    ("embed", "Embedding"),
    ("index", "Pembangunan indeks"),
    ("promote", "Promosi ke penyimpanan utama"),
    ("announce", "Pengumuman ke replika lain"),
)
STAGE_LABELS = dict(STAGES) | {"recover": "Pemulihan", "lock": "Kunci", "finish": "Selesai"}
STATUS_LABELS = {"RUNNING": "Berjalan", "SUCCESS": "Berhasil", "FAILED": "Gagal", "ABORTED": "Terhenti",
                 "SKIPPED": "Dilewati"}
STAGE_STATUS_LABELS = {"done": "selesai", "failed": "gagal", "running": "berjalan", "pending": "menunggu",
                       "not_reached": "tidak dijalankan", "skipped": "dilewati"}
TRIGGER_LABELS = {"schedule": "jadwal", "admin": "admin", "cli": "baris perintah"}
CHECK_LABELS = {
    "pages_fetched": "Halaman yang berhasil diambil",
    "min_pages_ratio": "Halaman dibanding proses sukses terakhir",
    "max_error_ratio": "Porsi halaman gagal",
    "chunks": "Potongan teks hasil perayapan",
    "min_chunks_ratio": "Potongan teks dibanding indeks lama",
}
# counts shown per stage: (log field, label)
STAGE_COUNTS: dict[str, tuple[tuple[str, str], ...]] = {
    "crawl": (("pages_fetched", "diambil"), ("pages_changed", "berubah"), ("pages_unchanged", "tetap"),
              ("pages_failed", "gagal"), ("pages_removed", "dihapus"), ("pages_skipped", "dilewati")),
    "chunk": (("documents", "dokumen"), ("chunks", "potongan teks"), ("old_chunks", "potongan di indeks lama")),
    "embed": (("chunks_embedded", "potongan di-embed"),),
    "index": (("chunks_total", "potongan total"), ("chunks_added", "ditambah"), ("chunks_removed", "dihapus")),
    "announce": (("receivers", "penerima"),),
}
PROGRESS_UNITS = {"crawl": "halaman", "embed": "potongan teks"}
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "Mei", "Jun", "Jul", "Agu", "Sep", "Okt", "Nov", "Des")


# --- human units -----------------------------------------------------------------------------------------------

def fmt_int(value: int | float | None) -> str:
    """1234 → "1.234" (Indonesian thousands separator)."""
    if value is None:
        return "-"
    return f"{int(value):,}".replace(",", ".")


def _decimal(value: float, digits: int = 1) -> str:
    text = f"{value:,.{digits}f}"
    return text.replace(",", "_").replace(".", ",").replace("_", ".")


def fmt_duration(seconds: float | None) -> str:
    """4.195 → "4,2 s"; 192 → "3 mnt 12 dtk"; 3900 → "1 j 5 mnt"."""
    if seconds is None:
        return "-"
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return f"{_decimal(seconds)} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} mnt {secs} dtk"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} j {minutes} mnt"


def fmt_bytes(size: int | float | None) -> str:
    """455888 → "445 KB" (binary units, as ``ls -h`` shows them)."""
    if size is None:
        return "-"
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{fmt_int(value)} {unit}" if unit in ("B", "KB") else f"{_decimal(value)} {unit}"
        value /= 1024
    return f"{_decimal(value)} TB"  # pragma: no cover


def _parse_time(stamp: str | datetime | None) -> datetime | None:
    if stamp is None or stamp == "":
        return None
    if isinstance(stamp, datetime):
        moment = stamp
    else:
        try:
            moment = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
        except ValueError:
            return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def fmt_time(stamp: str | datetime | None, timezone: str) -> str:
    """An ISO time → "23 Nov 2026 05.34.51 WIB" in ``timezone``."""
    moment = _parse_time(stamp)
    if moment is None:
        return "-"
    local = moment.astimezone(ZoneInfo(timezone))
    return (f"{local.day} {_MONTHS[local.month - 1]} {local.year} "
            f"{local.hour:02d}.{local.minute:02d}.{local.second:02d} {local.tzname()}")


def _percent(ratio: float) -> str:
    return f"{_decimal(ratio * 100, 0)}%"


# --- one run --------------------------------------------------------------------------------------------------

def _stage_lines(log: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    found: dict[str, list[Mapping[str, Any]]] = {}
    for line in log:
        if isinstance(line, Mapping) and line.get("stage"):
            found.setdefault(str(line["stage"]), []).append(line)
    return found


def _stages(run: JobRun, log: Sequence[Mapping[str, Any]], progress: Mapping[str, Any] | None
            ) -> list[dict[str, Any]]:
    lines = _stage_lines(log)
    out: list[dict[str, Any]] = []
    broken = False  # a stage failed or the run stopped: the later stages never ran
    for name, label in STAGES:
        found = lines.get(name)
        entry: dict[str, Any] = {"name": name, "label": label, "duration_s": None, "duration": "-", "counts": []}
        if found:
            line = found[-1]
            entry["duration_s"] = float(line.get("duration_s") or 0.0)
            entry["duration"] = fmt_duration(entry["duration_s"])
            entry["counts"] = [[lab, fmt_int(line[key]) if isinstance(line.get(key), int | float) else line[key]]
                               for key, lab in STAGE_COUNTS.get(name, ()) if line.get(key) is not None]
            if name == "index" and line.get("version"):
                entry["counts"].append(["versi", line["version"]])
            status = "failed" if name == "validate" and line.get("passed") is False else "done"
            broken = broken or status == "failed"
        elif broken:
            status = "not_reached"
        elif run.status == "RUNNING":
            status = "running" if progress and progress.get("stage") == name else "pending"
        elif run.status in ("FAILED", "ABORTED"):
            status, broken = "failed", True  # the first stage that did not finish is where it stopped
        elif run.status == "SUCCESS" and name == "announce":
            status = "skipped"  # no Redis: nobody to announce to
        else:
            status = "not_reached"
        entry["status"] = status
        entry["status_label"] = STAGE_STATUS_LABELS[status]
        out.append(entry)
    if run.status == "SKIPPED":
        for entry in out:
            entry["status"], entry["status_label"] = "not_reached", STAGE_STATUS_LABELS["not_reached"]
    return out


def _check_value(name: str, value: Any) -> str:
    if value is None:
        return "-"
    if name.endswith("_ratio"):
        return _percent(float(value))
    return fmt_int(value)


def _checks(log: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    lines = _stage_lines(log).get("validate") or []
    checks = lines[-1].get("checks", []) if lines else []
    out = []
    for check in checks:
        name = str(check.get("name"))
        comparison = "≤" if name == "max_error_ratio" else "≥"
        out.append({
            "name": name,
            "label": CHECK_LABELS.get(name, name),
            "ok": bool(check.get("ok")),
            "threshold": check.get("threshold"),
            "measured": check.get("measured"),
            "threshold_text": f"{comparison} {_check_value(name, check.get('threshold'))}",
            "measured_text": _check_value(name, check.get("measured")),
            "error": check.get("error"),
        })
    return out


def _crawl_line(log: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    lines = _stage_lines(log).get("crawl") or [{}]
    return lines[-1]


ANNOUNCEMENT_STATUS_LABELS = {"pending": "menunggu", "sent": "dikirim", "discarded": "dibuang"}


def run_announcements(log: Sequence[Mapping[str, Any]], store: Any) -> dict[str, Any]:
    """The announcements a run found (its log's ``announcements`` stage lists their ids), each with its status and
    delivery counts from the announcement store (blocking). ``available`` is False without a store; a store that
    cannot be read gives ``error`` (the rest of the run page still shows)."""
    ids: list[int] = []
    found = 0
    for line in _stage_lines(log).get("announcements", []):
        found += int(line.get("found") or 0)
        ids += [int(i) for i in line.get("ids") or [] if isinstance(i, int) or str(i).isdigit()]
    out: dict[str, Any] = {"available": store is not None, "found": found, "items": [], "error": None}
    if store is None:
        return out
    try:
        for announcement_id in dict.fromkeys(ids):
            a = store.announcement(announcement_id)
            if a is None:  # removed since (none is, today): skip it
                continue
            counts = store.delivery_counts(a.id)
            out["items"].append({
                "id": a.id, "title": a.title, "url": a.url, "date": a.date, "status": a.status,
                "status_label": ANNOUNCEMENT_STATUS_LABELS.get(a.status, a.status),
                "deliveries": {k: int(counts.get(k, 0)) for k in ("sent", "skipped", "failed", "sending")}})
    except Exception as error:  # boundary: the admin page renders (PostgreSQL away, a broken file) and says so on the page
        out["error"] = f"pengumuman tidak dapat dibaca ({type(error).__name__})"
    return out


def run_detail(runs: RunStore, run_id: str, timezone: str, announcements: Any = None) -> dict[str, Any] | None:
    """Everything the run page shows about one run, or None when there is no such run (blocking). With
    ``announcements`` (the announcement store) the announcements the run found, with their delivery counts."""
    run = runs.get(run_id)
    if run is None:
        return None
    log = runs.logs(run_id)
    progress = runs.progress(run_id) if run.status == "RUNNING" else None
    crawl = _crawl_line(log)
    summary = [
        ["Status", STATUS_LABELS.get(run.status, run.status)],
        ["Pemicu", TRIGGER_LABELS.get(run.trigger, run.trigger)],
        ["Diminta oleh", run.requested_by or ("jadwal otomatis" if run.trigger == "schedule" else "-")],
        ["Mulai", fmt_time(run.started_at, timezone)],
        ["Selesai", fmt_time(run.ended_at, timezone) if run.ended_at else "-"],
        ["Durasi", fmt_duration(run.duration_seconds) if run.ended_at else "-"],
        ["Halaman", f"{fmt_int(run.pages_fetched)} diambil, {fmt_int(run.pages_failed)} gagal"],
        ["Potongan teks", f"{fmt_int(run.chunks_total)} total, {fmt_int(run.chunks_embedded)} di-embed "
                          f"({fmt_duration(run.embed_seconds)})"],
        ["Versi indeks", run.index_version or "-"],
    ]
    if run.error:
        summary.append(["Keterangan", run.error])
    return {
        "run": run.as_json(),
        "timezone": timezone,
        "status_label": STATUS_LABELS.get(run.status, run.status),
        "summary": summary,
        "stages": _stages(run, log, progress),
        "checks": _checks(log),
        "failed_pages": [dict(p) for p in crawl.get("failed_pages") or []],
        "changes": {
            "added": list(crawl.get("pages_added_urls") or []),
            "changed": list(crawl.get("pages_changed_urls") or []),
            "removed": list(crawl.get("pages_removed_urls") or []),
        },
        "progress": _progress_view(run, progress),
        "announcements": run_announcements(log, announcements),
        "log": log,
    }


def _progress_view(run: JobRun, progress: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if run.status != "RUNNING":
        return None
    stage = str((progress or {}).get("stage") or "prepare")
    done = int((progress or {}).get("done") or 0)
    total = (progress or {}).get("total")
    unit = PROGRESS_UNITS.get(stage)
    if unit and total:
        text = f"{fmt_int(done)} dari {fmt_int(total)} {unit}"
    elif unit and done:
        text = f"{fmt_int(done)} {unit}"
    else:
        text = ""
    return {"run_id": run.run_id, "stage": stage, "stage_label": STAGE_LABELS.get(stage, stage), "done": done,
            "total": total, "text": text, "updated_at": (progress or {}).get("updated_at"),
            "started_at": run.started_at, "trigger": run.trigger}


def live_progress(runs: RunStore) -> dict[str, Any] | None:
    """The newest RUNNING run and where it is (stage, pages or chunks done of those known), or None (blocking)."""
    running = runs.recent(1, status="RUNNING")
    if not running:
        return None
    run = running[0]
    return _progress_view(run, runs.progress(run.run_id))


# --- many runs ------------------------------------------------------------------------------------------------

def run_rows(runs: Sequence[JobRun], timezone: str) -> list[dict[str, Any]]:
    """The history table (and ``python -m bot runs``): one row of display strings per run, newest first."""
    return [{
        "run_id": r.run_id,
        "status": r.status,
        "status_label": STATUS_LABELS.get(r.status, r.status),
        "trigger": TRIGGER_LABELS.get(r.trigger, r.trigger),
        "started": fmt_time(r.started_at, timezone),
        "duration": fmt_duration(r.duration_seconds) if r.ended_at else "-",
        "pages": fmt_int(r.pages_fetched),
        "failed": fmt_int(r.pages_failed),
        "chunks": fmt_int(r.chunks_total),
        "error": r.error or "",
    } for r in runs]


def trend(runs: Sequence[JobRun]) -> dict[str, list[Any]]:
    """The last runs oldest first, as the chart's series: x = start time (epoch seconds)."""
    ordered = [r for r in reversed(runs) if r.status != "RUNNING"]
    return {
        "run_ids": [r.run_id for r in ordered],
        "x": [(_parse_time(r.started_at) or datetime.now(UTC)).timestamp() for r in ordered],
        "status": [r.status for r in ordered],
        "duration_s": [round(r.duration_seconds, 3) for r in ordered],
        "pages_fetched": [r.pages_fetched for r in ordered],
        "pages_failed": [r.pages_failed for r in ordered],
        "chunks_total": [r.chunks_total for r in ordered],
    }


def index_facts(index: Mapping[str, Any], timezone: str, next_run: datetime | None) -> list[list[str]]:
    """The serving index in words: version, built at, documents, chunks, size, last crawl, next scheduled run."""
    if not index.get("version"):
        facts = [["Indeks", "belum ada; jalankan pembaruan indeks"]]
    else:
        facts = [
            ["Versi", str(index["version"])],
            ["Dibangun", fmt_time(index.get("built_at"), timezone)],
            ["Dokumen", fmt_int(index.get("documents", 0))],
            ["Potongan teks", fmt_int(index.get("chunks", 0))],
            ["Ukuran", fmt_bytes(index.get("size_bytes"))],
        ]
    facts.append(["Perayapan terakhir", fmt_time(index.get("last_crawl"), timezone)
                  if index.get("last_crawl") else "belum pernah berhasil"])
    facts.append(["Jadwal berikutnya", fmt_time(next_run, timezone) if next_run else "tidak terjadwal"])
    if index.get("error"):
        facts.append(["Masalah", str(index["error"])])
    return facts


class RunViews:
    """The admin page's run views over one run store and index directory (async wrappers for the server)."""

    def __init__(self, runs: RunStore, index_root: Path, timezone: str,
                 next_run: Callable[[], datetime | None] | None = None, trend_runs: int = 30,
                 announcements: Any = None) -> None:
        """``announcements``: the announcement store, for the announcements each run found (issue 32)."""
        self.runs = runs
        self.announcements = announcements
        self.index_root = Path(index_root)
        self.timezone = timezone
        self.next_run = next_run
        self.trend_runs = trend_runs

    async def _blocking(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    def _overview(self) -> dict[str, Any]:
        from sync_jobs.reindex import status_snapshot

        snapshot = status_snapshot(self.runs, self.index_root, limit=self.trend_runs)
        recent = self.runs.recent(self.trend_runs)
        next_run = None
        if self.next_run is not None:
            try:
                next_run = self.next_run()
            except Exception:  # boundary: the admin page renders without a next run; a broken cron expression is reported by the scheduler itself
                next_run = None
        return {
            "timezone": self.timezone,
            "index": snapshot["index"],
            "facts": index_facts(snapshot["index"], self.timezone, next_run),
            "trend": trend(recent),
            "runs": run_rows(recent, self.timezone),
            "live": live_progress(self.runs),
        }

    async def overview(self) -> dict[str, Any]:
        """Index facts in words, the trend series of the last runs, the history rows and the live progress."""
        return await self._blocking(self._overview)

    async def detail(self, run_id: str) -> dict[str, Any] | None:
        return await self._blocking(run_detail, self.runs, run_id, self.timezone, self.announcements)

    async def live(self) -> dict[str, Any] | None:
        return await self._blocking(live_progress, self.runs)
