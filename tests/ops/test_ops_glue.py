"""Bot-side ops glue: admin notifications on a loopback Bot API, pub/sub reload, summaries, table promotion."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import redis.asyncio as aioredis

from bot.channels.telegram import TelegramAdminNotifier
from bot.ops.index_watcher import IndexWatcher
from bot.ops.summary import format_run_summary
from storage.runs import JobRun
from sync_jobs.reindex import promote_tables
from tests.auxil.fake_apis import FakeApis


async def test_telegram_notifier_sends_to_telegram_admins_only() -> None:
    apis = await FakeApis().start()
    try:
        notify = TelegramAdminNotifier("123:abc", ["111", "telegram:222", "whatsapp:6281234", " "],
                                       base_url=apis.telegram_base)
        sent = await notify("Halo admin")
        assert sent == 2
        calls = apis.telegram("sendMessage")
        assert sorted(str(c.params["chat_id"]) for c in calls) == ["111", "222"]
        assert all(c.params["text"] == "Halo admin" for c in calls)
        assert all("123:abc" in c.path for c in calls)
        assert await notify("hanya satu", ["telegram:222"]) == 1
    finally:
        await apis.close()


async def test_telegram_notifier_survives_an_unreachable_api() -> None:
    notify = TelegramAdminNotifier("123:abc", ["111"], base_url="http://127.0.0.1:9/bot", timeout_seconds=2)
    assert await notify("x") == 0


def test_summary_is_indonesian_with_counts_and_error() -> None:
    run = JobRun("r1", "admin", "FAILED", "2026-01-01T00:00:00.000Z", pages_fetched=3, pages_failed=40,
                 chunks_embedded=0, duration_seconds=12.5, error="the crawl fetched 3 pages")
    text = format_run_summary(run)
    assert "GAGAL" in text and "Indeks lama tetap dipakai" in text
    assert "3 diambil" in text and "40 gagal" in text and "12,5 detik" in text
    assert "the crawl fetched 3 pages" in text
    ok = format_run_summary(JobRun("r2", "schedule", "SUCCESS", "x", chunks_embedded=4, index_version="v9"))
    assert ok.startswith("✅") and "4 di-embed" in ok and "v9" in ok


async def test_watcher_reloads_on_pubsub_and_on_the_pointer_check(redis_url) -> None:
    client = aioredis.Redis.from_url(redis_url, socket_timeout=2)
    versions = iter(["v2", None, None, "v3"])
    loaded: list[str] = []

    def reload() -> bool:  # a pointer that moved to v2 when the message arrives
        version = next(versions, None)
        if version:
            loaded.append(version)
        return version is not None

    watcher = IndexWatcher(reload, redis=client, channel="t:index", interval_seconds=0)
    await watcher.start()
    try:
        receivers = await client.publish("t:index", json.dumps({"version": "v2"}))
        assert receivers == 1
        for _ in range(100):
            if watcher.reloads:
                break
            await asyncio.sleep(0.05)
        assert loaded == ["v2"] and watcher.reloads == 1
    finally:
        await watcher.stop()
        await client.aclose()
    # without Redis the periodic pointer check does it
    polled = IndexWatcher(reload, interval_seconds=0.05)
    await polled.start()
    try:
        for _ in range(100):
            if polled.reloads:
                break
            await asyncio.sleep(0.05)
        assert polled.reloads == 1 and loaded == ["v2", "v3"]
    finally:
        await polled.stop()


def test_promote_replaces_only_the_store_tables(tmp_path) -> None:
    serving, staging = tmp_path / "serving.sqlite3", tmp_path / "staging.sqlite3"
    with sqlite3.connect(serving) as db:
        db.executescript("CREATE TABLE documents (id TEXT, body TEXT); INSERT INTO documents VALUES ('a', 'old');"
                         "CREATE TABLE feedback (v TEXT); INSERT INTO feedback VALUES ('up');")
    db.close()
    with sqlite3.connect(staging) as db:
        db.executescript("CREATE TABLE documents (id TEXT, body TEXT); INSERT INTO documents VALUES ('a', 'new'), "
                         "('b', 'new'); CREATE TABLE pages (url TEXT); INSERT INTO pages VALUES ('u');"
                         "CREATE TABLE feedback (v TEXT);")
    db.close()
    reader = sqlite3.connect(serving)  # an open reader does not block the promotion
    try:
        promote_tables(staging, serving, ("documents", "pages", "chunks"))
        assert reader.execute("SELECT body FROM documents ORDER BY id").fetchall() == [("new",), ("new",)]
        assert reader.execute("SELECT url FROM pages").fetchall() == [("u",)]
        assert reader.execute("SELECT v FROM feedback").fetchall() == [("up",)]
    finally:
        reader.close()
    fresh = tmp_path / "fresh.sqlite3"
    promote_tables(staging, fresh, ("documents",))
    db = sqlite3.connect(fresh)
    assert db.execute("SELECT COUNT(*) FROM documents").fetchone() == (2,)
    db.close()
