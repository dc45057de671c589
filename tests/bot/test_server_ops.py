"""``serve`` with the real operations side (ReindexCoordinator, RunStore, schedule) behind /status and /admin."""

from __future__ import annotations

import aiohttp
import pytest

from bot.app import ServeApp
from bot.settings import Settings
from handlers.chat import UserRef
from tests.auxil.admin import admin_headers
from tests.auxil.answerer import CorpusAnswerer

SEEDS = ["https://prodi.example.invalid/"]  # serve needs SITE_SEEDS; never crawled here (no schedule, no index run)


@pytest.fixture
async def served(data_dir):
    app = ServeApp(
        Settings(_env_file=None, data_dir=data_dir, http_port=0, admin_token="adm", admin_ids="telegram:1",
                 site_seeds=SEEDS),
        answerer=CorpusAnswerer(), index_ready=lambda: True, start_scheduler=False,
    )
    await app.start()
    try:
        yield app
    finally:
        await app.stop()


async def test_admin_status_shows_real_runs_with_their_log_lines(served):
    # a run recorded while the start-up recovery works would be aborted by it (the coordinator's runs wait for it)
    await served.ops.coordinator.recovered()
    runs = served.ops.runs
    run = runs.start("schedule")
    runs.log(run.run_id, {"stage": "crawl", "pages": 14, "msg": "crawl selesai"})
    runs.finish(run.run_id, "SUCCESS", index_version="v-test")
    async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{served.port}") as s:
        async with s.get("/admin/api/status", headers=await admin_headers(s, "adm")) as r:
            data = await r.json()
    assert r.status == 200
    newest = data["runs"][0]
    assert newest["run_id"] == run.run_id and newest["status"] == "SUCCESS"
    assert newest["log"][0]["msg"] == "crawl selesai"
    assert data["feedback"] == {"up": 0, "down": 0}
    assert "index" in data and data["reindex_running"] is False


async def test_status_command_reads_the_real_operations(served):
    text = (await served.service.handle(UserRef("telegram", "5"), "/status")).text
    assert "Versi indeks" in text and "Antrean pertanyaan" in text


async def test_serve_starts_and_stops_the_reindex_schedule(data_dir):
    app = ServeApp(
        Settings(_env_file=None, data_dir=data_dir, http_port=0, reindex_cron="30 3 * * *", site_seeds=SEEDS),
        answerer=CorpusAnswerer(), index_ready=lambda: True, start_scheduler=True,
    )
    await app.start()
    try:
        schedule = app.ops.schedule
        assert schedule.running
        assert (schedule.next_run_time().hour, schedule.next_run_time().minute) == (3, 30)
    finally:
        await app.stop()
    assert not schedule.running


async def test_admin_reindex_goes_to_the_real_coordinator(served, monkeypatch):
    started: list = []
    monkeypatch.setattr(served.ops.coordinator, "start", lambda trigger, requested_by=None: started.append(
        (trigger, requested_by)))
    async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{served.port}") as s:
        async with s.post("/admin/api/reindex", headers=await admin_headers(s, "adm")) as r:
            assert r.status == 202
    reply = await served.service.handle(UserRef("telegram", "1"), "/reindex")
    assert "ringkasan" in reply.text
    assert started == [("admin", None), ("admin", "telegram:1")]
