"""The Indonesian run summary admins get."""

from __future__ import annotations

from bot.ops.summary import format_run_summary
from storage.runs import JobRun


def test_summary_is_indonesian_with_counts_and_error() -> None:
    run = JobRun("r1", "admin", "FAILED", "2026-01-01T00:00:00.000Z", pages_fetched=3, pages_failed=40,
                 chunks_embedded=0, duration_seconds=12.5, error="the crawl fetched 3 pages")
    text = format_run_summary(run)
    assert "GAGAL" in text and "Indeks lama tetap dipakai" in text
    assert "3 diambil" in text and "40 gagal" in text and "12,5 detik" in text
    assert "the crawl fetched 3 pages" in text
    ok = format_run_summary(JobRun("r2", "schedule", "SUCCESS", "x", chunks_embedded=4, index_version="v9"))
    assert ok.startswith("✅") and "4 di-embed" in ok and "v9" in ok
