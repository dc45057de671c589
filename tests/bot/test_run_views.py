"""What maintainers read about runs (bot.run_views): stages, safety valves, failed pages, changes, live progress,
trends and human units. Real run stores in SQLite; the run records are what the job writes."""

from __future__ import annotations

from pathlib import Path

from bot.run_views import (
    fmt_bytes,
    fmt_duration,
    fmt_int,
    fmt_time,
    index_facts,
    live_progress,
    run_detail,
    run_rows,
    trend,
)
from storage.runs import RunStore


def seed_failed_run(store: RunStore) -> str:
    """A run stopped by the error-ratio valve, with the lines the job writes (crawl, chunk, validate, finish)."""
    run = store.start("admin", requested_by="telegram:42")
    rid = run.run_id
    store.log(rid, {"run_id": rid, "stage": "prepare", "duration_s": 0.012})
    store.log(rid, {"run_id": rid, "stage": "crawl", "duration_s": 4.195, "pages_fetched": 8, "pages_changed": 1,
                    "pages_unchanged": 7, "pages_failed": 3, "pages_removed": 0, "pages_skipped": 2,
                    "failed_pages": [{"url": "https://prodi.example.ac.id/akademik/", "status": 503,
                                      "error": "HTTP 503", "retries": 2},
                                     {"url": "https://prodi.example.ac.id/pmb/", "status": None,
                                      "error": "timeout after 20s", "retries": 2}],
                    "pages_added_urls": ["https://prodi.example.ac.id/berita/baru/"],
                    "pages_changed_urls": [], "pages_removed_urls": []})
    store.log(rid, {"run_id": rid, "stage": "chunk", "duration_s": 0.3, "documents": 9, "chunks": 40,
                    "old_chunks": 42})
    store.log(rid, {"run_id": rid, "stage": "validate", "duration_s": 0.001, "passed": False, "checks": [
        {"name": "pages_fetched", "ok": True, "threshold": 1, "measured": 8},
        {"name": "max_error_ratio", "ok": False, "threshold": 0.2, "measured": 0.2727,
         "error": "3 of 11 pages failed (27%, the limit is 20%)"},
        {"name": "chunks", "ok": True, "threshold": 1, "measured": 40},
        {"name": "min_chunks_ratio", "ok": True, "threshold": 0.5, "measured": 0.9524},
    ]})
    store.finish(rid, "FAILED", error="3 of 11 pages failed (27%, the limit is 20%)", pages_fetched=8,
                 pages_failed=3)
    store.log(rid, {"run_id": rid, "stage": "finish", "status": "FAILED"})
    return rid


def test_human_units_are_indonesian() -> None:
    assert fmt_duration(4.195) == "4,2 s"
    assert fmt_duration(192) == "3 mnt 12 dtk"
    assert fmt_duration(3900) == "1 j 5 mnt"
    assert fmt_bytes(455888) == "445 KB"
    assert fmt_bytes(3_500_000) == "3,3 MB"
    assert fmt_int(12345) == "12.345"
    # 22:34:51 UTC is 05:34:51 the next day in Jakarta (WIB, UTC+7)
    assert fmt_time("2026-11-22T22:34:51Z", "Asia/Jakarta") == "23 Nov 2026 05.34.51 WIB"
    assert fmt_time("2026-11-22T22:34:51.250Z", "Asia/Makassar").endswith("06.34.51 WITA")


def test_a_failed_run_shows_its_stages_valves_failed_pages_and_changes(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    rid = seed_failed_run(store)
    d = run_detail(store, rid, "Asia/Jakarta")
    assert d is not None and d["status_label"] == "Gagal"
    stages = {s["name"]: s for s in d["stages"]}
    assert stages["crawl"]["status"] == "done" and stages["crawl"]["duration"] == "4,2 s"
    assert ["gagal", "3"] in stages["crawl"]["counts"]
    assert stages["validate"]["status"] == "failed"
    assert [stages[n]["status"] for n in ("embed", "index", "promote")] == ["not_reached"] * 3
    failed = {c["name"]: c for c in d["checks"] if not c["ok"]}
    assert set(failed) == {"max_error_ratio"}
    assert failed["max_error_ratio"]["threshold_text"] == "≤ 20%"
    assert failed["max_error_ratio"]["measured_text"] == "27%"
    assert d["failed_pages"][0] == {"url": "https://prodi.example.ac.id/akademik/", "status": 503,
                                    "error": "HTTP 503", "retries": 2}
    assert d["changes"]["added"] == ["https://prodi.example.ac.id/berita/baru/"]
    summary = dict(d["summary"])
    assert summary["Pemicu"] == "admin" and summary["Diminta oleh"] == "telegram:42"
    assert "27%" in summary["Keterangan"]
    assert summary["Mulai"].endswith("WIB")
    assert d["progress"] is None
    assert [line["stage"] for line in d["log"]][-1] == "finish"
    assert run_detail(store, "no-such-run", "Asia/Jakarta") is None


def test_a_run_that_crashed_in_a_stage_marks_that_stage_failed(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    run = store.start("schedule")
    store.log(run.run_id, {"stage": "prepare", "duration_s": 0.01})
    store.log(run.run_id, {"stage": "crawl", "duration_s": 1.0, "pages_fetched": 5})
    store.finish(run.run_id, "ABORTED", error="the process stopped before the run ended")
    stages = {s["name"]: s["status"] for s in run_detail(store, run.run_id, "UTC")["stages"]}
    assert stages["crawl"] == "done" and stages["chunk"] == "failed" and stages["embed"] == "not_reached"


def test_live_progress_names_the_stage_and_pages_done_of_known(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    assert live_progress(store) is None
    run = store.start("admin")
    assert live_progress(store)["stage"] == "prepare"  # started, nothing reported yet
    store.set_progress(run.run_id, "crawl", 37, 70)
    live = live_progress(store)
    assert (live["run_id"], live["stage"], live["done"], live["total"]) == (run.run_id, "crawl", 37, 70)
    assert live["text"] == "37 dari 70 halaman" and live["stage_label"] == "Perayapan & ekstraksi"
    store.set_progress(run.run_id, "embed", 64, 480)
    assert live_progress(store)["text"] == "64 dari 480 potongan teks"
    detail = run_detail(store, run.run_id, "UTC")
    assert {s["name"]: s["status"] for s in detail["stages"]}["embed"] == "running"
    store.finish(run.run_id, "SUCCESS")
    assert live_progress(store) is None


def test_trend_has_one_point_per_finished_run_oldest_first(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    ids = []
    for n in range(3):
        run = store.start("schedule")
        store.finish(run.run_id, "SUCCESS" if n != 1 else "FAILED", pages_fetched=60 + n, pages_failed=n,
                     chunks_total=400 + n)
        ids.append(run.run_id)
    store.start("admin")  # running: not a point yet
    series = trend(store.recent(30))
    assert series["run_ids"] == ids
    assert series["pages_fetched"] == [60, 61, 62] and series["pages_failed"] == [0, 1, 2]
    assert series["chunks_total"] == [400, 401, 402] and len(series["duration_s"]) == len(series["x"]) == 3
    rows = run_rows(store.recent(2), "Asia/Jakarta")
    assert rows[0]["status_label"] == "Berjalan" and rows[1]["status_label"] == "Berhasil"


def test_index_facts_are_words() -> None:
    facts = dict(index_facts({"version": "v7", "chunks": 1234, "documents": 80, "size_bytes": 455888,
                              "built_at": "2026-11-22T22:34:51Z", "last_crawl": "2026-11-22T22:35:00Z"},
                             "Asia/Jakarta", None))
    assert facts == {"Versi": "v7", "Dibangun": "23 Nov 2026 05.34.51 WIB", "Dokumen": "80",
                     "Potongan teks": "1.234", "Ukuran": "445 KB", "Perayapan terakhir": "23 Nov 2026 05.35.00 WIB",
                     "Jadwal berikutnya": "tidak terjadwal"}
    assert dict(index_facts({"version": None}, "UTC", None))["Indeks"].startswith("belum ada")
