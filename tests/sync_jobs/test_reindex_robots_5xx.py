"""robots.txt answering 5xx (RFC 9309: assume complete disallow): the run fails with a plain error, the admins are
told so, and the old index keeps serving."""

from __future__ import annotations

import asyncio

import pytest

from bot import wiring
from tests.auxil.reindex_site import ops_settings
from tests.sync_jobs.test_reindex_acceptance import Recorder

pytestmark = pytest.mark.slow  # a real reindex run


async def test_a_robots_5xx_fails_the_run_and_the_old_index_still_serves(mini_site, data_dir) -> None:
    for topic in ("basis data", "jaringan komputer", "kecerdasan buatan"):
        mini_site.set_page(f"/{topic.replace(' ', '-')}/", topic.title(),
                           [f"Mata kuliah {topic} diajarkan pada semester tiga dengan praktikum mingguan."])
    settings = ops_settings(data_dir, mini_site.base_url, reindex_in_subprocess=False, admin_ids=["1"])
    notify = Recorder()
    coordinator = wiring.build_reindex_coordinator(settings, notifier=notify, recover=False)
    try:
        good = await coordinator.trigger("cli")
        assert good.status == "SUCCESS"
        mini_site.robots_status = 503
        bad = await coordinator.trigger("schedule")
    finally:
        await coordinator.close()
    assert bad.status == "FAILED"
    assert bad.error.startswith("robots.txt returned HTTP 5xx") and "HTTP 503" in bad.error
    assert "RFC 9309" in bad.error and "CRAWL_ROBOTS_5XX=allow" in bad.error
    assert bad.pages_fetched == 0
    text, targets = notify.sent[-1]
    assert targets is None  # every admin hears about a failed run
    assert "GAGAL" in text and "robots.txt returned HTTP 5xx" in text and "Indeks lama tetap dipakai" in text
    manager = coordinator.job.index_manager
    assert manager.current_version() == good.index_version

    def search() -> list[str]:
        return [hit.text for hit in manager.current().search("kecerdasan buatan", 3, "hybrid").hits]

    assert any("kecerdasan buatan" in text for text in await asyncio.to_thread(search))
