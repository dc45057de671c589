"""Admin notifications through python-telegram-bot's Bot.send_message, against the loopback Bot API."""

from __future__ import annotations

from bot.channels.telegram import TelegramAdminNotifier
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
