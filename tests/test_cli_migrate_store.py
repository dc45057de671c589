"""``python -m bot migrate-store --to postgresql://…``: the sample site's stores and a seeded week of insights are
copied into PostgreSQL with equal counts table by table, a rerun copies nothing twice, a difference exits 1, and
the password never shows."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from storage.announcements import AnnouncementStore
from storage.docstore import DocumentStore
from storage.insights import InsightsStore
from storage.pg import PgDatabase
from storage.pg_announcements import PgAnnouncementStore
from storage.pg_stores import PgDocumentStore, PgInsightsStore, PgRunStore
from storage.runs import RunStore
from tests.auxil.postgres import fresh_schema

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_schema() as (url, _name):
        yield url


def _with_password(url: str, password: str) -> str:
    parts = urllib.parse.urlsplit(url)
    user = parts.username or "postgres"
    return parts._replace(netloc=f"{user}:{password}@{parts.hostname}:{parts.port or 5432}").geturl()


def _migrate(data_dir: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATA_DIR": str(data_dir)}
    return subprocess.run([sys.executable, "-m", "bot", "migrate-store", "--to", url, *args], capture_output=True,
                          text=True, env=env, cwd=data_dir.parent, timeout=300)


@pytest.fixture
def sample_data_dir(data_dir: Path, warm_embeddings) -> Path:
    """DATA_DIR with the sample site's document store and run history (a real reindex) and a seeded week of
    insights: questions on every day, feedback, and admin answers with versions and a deletion."""
    cache, _run = warm_embeddings
    built = cache.parents[2]
    for name in ("prodi.sqlite3", "runs.sqlite3"):
        shutil.copy(built / name, data_dir / name)
    insights = InsightsStore(data_dir / "insights.sqlite3")
    now = time.time()
    for day in range(7):
        for i in range(5):
            trace = f"d{day}-q{i}"
            insights.record(trace_id=trace, channel=("web", "telegram", "whatsapp")[i % 3],
                            user_key=f"web:user-{i}", question=f"Pertanyaan {i} hari ke-{day}, hubungi 081234567890",
                            answer="Maaf, belum ada informasinya." if i % 2 else "Jawaban.", abstained=bool(i % 2),
                            ts=now - day * 86400 - i * 60)
            if i == 1:
                insights.set_feedback(trace, "down", ts=now - day * 86400)
    insights.save_answer(question="Kapan wisuda?", answer="Wisuda 20 Juli.", author="ani")
    insights.save_answer(question="Kapan wisuda?", answer="Wisuda 21 Juli.", author="ani", answer_id=1)
    insights.save_answer(question="Biaya UKT?", answer="Lihat portal.", author="budi")
    insights.delete_answer(2, "budi")
    insights.close()
    seed_announcements(data_dir / "announcements.sqlite3")
    return data_dir


def seed_announcements(path: Path) -> None:
    """Three subscribers (one on 'beasiswa' only), three announcements (sent, discarded, pending; the first id
    taken by a row deleted since, so the ids do not start at 1) and the sent one's deliveries."""
    import sqlite3
    from types import SimpleNamespace

    store = AnnouncementStore(path)
    store.subscribe("telegram:101", "telegram", "all")
    store.subscribe("telegram:102", "telegram", "beasiswa")
    store.subscribe("whatsapp:62811", "whatsapp", "all")
    drafts = [SimpleNamespace(key=f"k{n}", doc_id=f"d{n}", url=f"https://prodi.example.ac.id/berita/{n}/",
                              title=title, date="2026-11-20", summary=f"Ringkasan {n}.", text=title)
              for n, title in enumerate(("dihapus", "Beasiswa Unggulan", "Seminar", "Rapat dosen"))]
    gone, sent, dropped, _waiting = store.add_announcements(drafts, run_id="r-1")
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM announcements WHERE id = ?", (gone.id,))
    store.set_status(sent.id, "sent", expect="pending")
    store.set_status(dropped.id, "discarded", expect="pending")
    for user, channel, status in (("telegram:101", "telegram", "sent"), ("telegram:102", "telegram", "sent"),
                                  ("whatsapp:62811", "whatsapp", "skipped")):
        store.claim_delivery(sent.id, user, channel)
        store.finish_delivery(sent.id, user, status)
    store.close()


def test_migrate_store_copies_every_table_with_equal_counts_and_is_idempotent(sample_data_dir: Path,
                                                                             pg_url: str) -> None:
    url = _with_password(pg_url, "migrate-pw-secret")
    result = _migrate(sample_data_dir, url, "--json")
    assert result.returncode == 0, result.stderr
    assert "migrate-pw-secret" not in result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["ok"] is True and ":***@" in data["to"]
    counts = {(r["file"], r["table"]): r for r in data["tables"]}
    assert counts[("prodi.sqlite3", "documents")]["postgresql"] > 50 and counts[("prodi.sqlite3", "chunks")]["ok"]
    assert counts[("runs.sqlite3", "job_runs")]["postgresql"] >= 1
    assert counts[("insights.sqlite3", "questions")]["postgresql"] == 35
    assert counts[("insights.sqlite3", "admin_answers")]["postgresql"] == 4
    assert {t: counts[("announcements.sqlite3", t)]["postgresql"]
            for t in ("subscriptions", "announcements", "deliveries")} == {
        "subscriptions": 3, "announcements": 3, "deliveries": 3}
    assert all(r["sqlite"] == r["postgresql"] for r in data["tables"])

    # the copy reads back as the SQLite stores do
    with PgDatabase(pg_url) as db:
        pg_docs, pg_runs, pg_insights = PgDocumentStore(db), PgRunStore(db), PgInsightsStore(db)
        with DocumentStore(sample_data_dir / "prodi.sqlite3") as docs:
            assert pg_docs.documents() == docs.documents() and pg_docs.chunks() == docs.chunks()
            assert pg_docs.page_states() == docs.page_states() and pg_docs.last_crawl_id() == docs.last_crawl_id()
        assert pg_runs.recent(50) == RunStore(sample_data_dir / "runs.sqlite3").recent(50)
        sqlite_insights = InsightsStore(sample_data_dir / "insights.sqlite3")
        try:
            assert pg_insights.questions(0, time.time() + 1) == sqlite_insights.questions(0, time.time() + 1)
            assert pg_insights.answers(include_deleted=True) == sqlite_insights.answers(include_deleted=True)
            assert pg_insights.user_hash("web:user-1") == sqlite_insights.user_hash("web:user-1")
        finally:
            sqlite_insights.close()
        assert pg_insights.forget_user("web:user-0") == 7  # /hapus finds the copied questions
        pg_ann = PgAnnouncementStore(db)
        with AnnouncementStore(sample_data_dir / "announcements.sqlite3") as ann:
            assert pg_ann.announcements() == ann.announcements()  # ids, statuses, summaries, run ids
            assert pg_ann.subscriptions() == ann.subscriptions()
            sent = ann.announcements(status="sent")[0]
            assert pg_ann.delivery_counts(sent.id) == ann.delivery_counts(sent.id) == {
                "sending": 0, "sent": 2, "skipped": 1, "failed": 0}
            newest = ann.announcements()[0].id
        # the copied deliveries keep their claims: nothing is sent twice after the move
        assert not pg_ann.claim_delivery(sent.id, "telegram:101", "telegram")
        # a later reindex's announcement gets an id after the copied ones
        from types import SimpleNamespace

        added = pg_ann.add_announcements([SimpleNamespace(key="k-new", doc_id="d9", url="https://x.example/9",
                                                          title="Baru", date="2026-11-27", summary="Baru.",
                                                          text="Baru")])
        assert added[0].id == newest + 1
        # a later crawl commit gets a new crawl id after the copied ones
        last = pg_docs.last_crawl_id()
        pg_docs.sync_documents([], {}, replace_all=False)
        assert pg_docs.last_crawl_id() == last + 1

    again = _migrate(sample_data_dir, url)
    assert again.returncode == 1  # PostgreSQL now differs (7 questions forgotten, one crawl added): reported
    assert "MISMATCH" in again.stdout and "questions" in again.stdout and "migrate-pw-secret" not in again.stdout
    assert "ok" in again.stdout


def test_a_rerun_adds_nothing_and_keeps_counts_equal(sample_data_dir: Path, pg_url: str) -> None:
    assert _migrate(sample_data_dir, pg_url).returncode == 0
    rerun = _migrate(sample_data_dir, pg_url, "--json")
    assert rerun.returncode == 0, rerun.stderr
    data = json.loads(rerun.stdout)
    assert data["ok"] and all(r["added"] == 0 for r in data["tables"])


def test_migrate_store_without_a_target_or_stores_says_what_to_do(data_dir: Path) -> None:
    no_url = subprocess.run([sys.executable, "-m", "bot", "migrate-store"], capture_output=True, text=True,
                            env={**os.environ, "DATA_DIR": str(data_dir)}, cwd=data_dir.parent, timeout=120)
    assert no_url.returncode == 2 and "--to postgresql://" in no_url.stderr
    empty = _migrate(data_dir, "postgresql://postgres@127.0.0.1:5432/test")
    assert empty.returncode == 2 and "no SQLite store" in empty.stderr
