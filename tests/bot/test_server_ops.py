"""``serve`` with the real operations side (ReindexCoordinator, RunStore, schedule) behind /status and /admin."""

from __future__ import annotations

import aiohttp
import pytest

from bot.app import ServeApp
from bot.settings import Settings
from handlers.chat import UserRef
from tests.auxil.answerer import CorpusAnswerer


@pytest.fixture
async def served(data_dir):
    app = ServeApp(
        Settings(_env_file=None, data_dir=data_dir, http_port=0, admin_token="adm", admin_ids="telegram:1"),
        answerer=CorpusAnswerer(), index_ready=lambda: True, start_scheduler=False,
    )
    await app.start()
    try:
        yield app
    finally:
        await app.stop()


async def test_admin_status_shows_real_runs_with_their_log_lines(served):
    runs = served.ops.runs
    run = runs.start("schedule")
    runs.log(run.run_id, {"stage": "crawl", "pages": 14, "msg": "crawl selesai"})
    runs.finish(run.run_id, "SUCCESS", index_version="v-test")
    async with aiohttp.ClientSession() as s:
        async with s.get(f"http://127.0.0.1:{served.port}/admin/api/status",
                         headers={"Authorization": "Bearer adm"}) as r:
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
