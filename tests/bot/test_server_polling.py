"""Telegram long polling (no TELEGRAM_WEBHOOK_URL) against the loopback Bot API stand-in."""

from __future__ import annotations

import aiohttp
import pytest

from bot.app import ServeApp
from bot.settings import Settings
from tests.auxil.answerer import CorpusAnswerer
from tests.auxil.fake_apis import FakeApis
from tests.auxil.telegram_offline import text_update


async def test_polling_mode_deletes_the_webhook_and_answers_updates(redis_url, data_dir):
    apis = await FakeApis().start()
    app = ServeApp(
        Settings(_env_file=None, data_dir=data_dir, http_port=0, redis_url=redis_url, telegram_token="123:poll",
                 telegram_api_base_url=apis.telegram_base),
        answerer=CorpusAnswerer(), status_provider=dict, reindex_trigger=lambda who: None, index_ready=lambda: True,
        start_scheduler=False,
    )
    await app.start()
    try:
        assert app.channel("telegram").mode == "polling"
        assert apis.telegram("deleteWebhook") and not apis.telegram("setWebhook")
        await apis.telegram_updates.put(text_update("Apa saja laboratorium yang tersedia?", user_id=808))
        await apis.wait_for(lambda: apis.telegram("sendMessage"))
        sent = apis.telegram("sendMessage")[0].params
        assert sent["chat_id"] == 808 and "laboratorium" in sent["text"]
        async with aiohttp.ClientSession() as s:
            async with s.post(f"http://127.0.0.1:{app.port}/telegram/webhook", json={"update_id": 1}) as r:
                assert r.status == 404  # the webhook route is off in polling mode
    finally:
        await app.stop()
        await apis.close()


async def test_unreachable_bot_api_disables_telegram_but_serves_the_web(data_dir, unused_tcp_port, caplog):
    app = ServeApp(
        Settings(_env_file=None, data_dir=data_dir, http_port=0, telegram_token="123:down",
                 telegram_api_base_url=f"http://127.0.0.1:{unused_tcp_port}/bot"),
        answerer=CorpusAnswerer(), status_provider=dict, reindex_trigger=lambda who: None, index_ready=lambda: True,
        start_scheduler=False,
    )
    await app.start()
    try:
        assert app.channel("telegram").application is None
        assert any("Telegram disabled" in r.getMessage() for r in caplog.records)
        async with aiohttp.ClientSession() as s:
            async with s.post(f"http://127.0.0.1:{app.port}/api/chat", json={"message": "Siapa ketua prodi?"}) as r:
                assert r.status == 200
    finally:
        await app.stop()


async def test_a_busy_port_fails_start_and_releases_everything(data_dir, redis_url):
    first = ServeApp(Settings(_env_file=None, data_dir=data_dir, http_port=0), answerer=CorpusAnswerer(),
                     status_provider=dict, reindex_trigger=lambda who: None, start_scheduler=False)
    await first.start()
    try:
        second = ServeApp(Settings(_env_file=None, data_dir=data_dir, http_port=first.port, redis_url=redis_url),
                          answerer=CorpusAnswerer(), status_provider=dict, reindex_trigger=lambda who: None,
                          start_scheduler=False)
        with pytest.raises(OSError):
            await second.start()
        assert second.runner is None and second._closers == []  # the Redis client was closed again
    finally:
        await first.stop()
