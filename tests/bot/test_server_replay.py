"""Replay many real-shaped update types, and mutated/random JSON, against both webhooks of a running server.

Every delivery must get a 2xx or a deliberate 4xx, the process must stay up, and only the updates that deserve a
reply get one.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import hmac
import json
import logging
import random

import aiohttp
import pytest

from bot.app import ServeApp
from bot.settings import Settings
from tests.auxil.answerer import CorpusAnswerer
from tests.auxil.fake_apis import FakeApis
from tests.auxil.platform_payloads import WHATSAPP_PAYLOADS, telegram_updates
from tests.handlers.whatsapp_payloads import MORE_WHATSAPP_PAYLOADS

SECRET = "replay-secret"
APP_SECRET = "replay-app-secret"


@pytest.fixture
async def server(redis_url, data_dir):
    apis = await FakeApis().start()
    settings = Settings(
        _env_file=None, data_dir=data_dir, http_port=0, redis_url=redis_url, user_rate_limit_per_minute=1000,
        telegram_token="123:fake", telegram_webhook_url="https://x.invalid/telegram/webhook",
        telegram_secret_token=SECRET, telegram_api_base_url=apis.telegram_base,
        whatsapp_token="t", whatsapp_phone_number_id="PNID", whatsapp_verify_token="v",
        whatsapp_app_secret=APP_SECRET, whatsapp_graph_base_url=apis.graph_base,
    )
    app = ServeApp(settings, answerer=CorpusAnswerer(), status_provider=dict, reindex_trigger=lambda who: None,
                   index_ready=lambda: True, start_scheduler=False)
    await app.start()
    session = aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}")
    app.apis, app.session = apis, session  # type: ignore[attr-defined]
    try:
        yield app
    finally:
        await session.close()
        await app.stop()
        await apis.close()


async def send_tg(app, body: bytes) -> int:
    async with app.session.post("/telegram/webhook", data=body,
                                headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}) as r:
        return r.status


async def send_wa(app, body: bytes) -> int:
    sig = "sha256=" + hmac.new(APP_SECRET.encode(), body, hashlib.sha256).hexdigest()
    async with app.session.post("/whatsapp/webhook", data=body, headers={"X-Hub-Signature-256": sig}) as r:
        return r.status


async def settle(app) -> None:
    """Wait until Telegram's update queue is empty and no new Bot/Graph API call arrives for a moment."""
    await app.channel("whatsapp").webhook.drain()
    while True:
        before = len(app.apis.calls)
        await asyncio.sleep(0.3)
        if app.channel("telegram").application.update_queue.empty() and len(app.apis.calls) == before:
            return


def _ok(status: int) -> bool:
    return 200 <= status < 300 or status in (400, 403, 404, 413)


async def test_replayed_platform_payloads_all_get_2xx_or_4xx(server, caplog):
    with caplog.at_level(logging.ERROR):
        tg_status = [await send_tg(server, json.dumps(u).encode()) for u in telegram_updates()]
        wa_payloads = WHATSAPP_PAYLOADS + MORE_WHATSAPP_PAYLOADS
        wa_status = [await send_wa(server, json.dumps(p).encode()) for p in wa_payloads]
        apis = server.apis
        await apis.wait_for(lambda: len(apis.telegram("answerCallbackQuery")) >= 3
                            and len(apis.telegram("sendMessage")) >= 8 and len(apis.graph("text")) >= 10)
        await settle(server)
    assert all(_ok(s) for s in tg_status), tg_status
    assert all(_ok(s) for s in wa_status), wa_status
    sent = server.apis.telegram("sendMessage")
    replied_chats = {c.params["chat_id"] for c in sent}
    assert replied_chats <= {9001, -100777}, "no replies in channels"
    group = [c.params["text"] for c in sent if c.params["chat_id"] == -100777]
    assert len(group) == 1 and "/sumber" in group[0], "in the group only /help@prodi_test_bot is answered"
    assert len(sent) >= 8  # text, /start, sticker, voice, document, location, contact, video note, dice, poll…
    assert len(server.apis.telegram("answerCallbackQuery")) == 3  # every callback query answered
    wa_texts = [c.params["text"]["body"] for c in server.apis.graph("text")]
    assert len(wa_texts) >= 10
    recipients = {c.params.get("to") or c.params.get("recipient") for c in server.apis.graph("text")}
    assert {"62899", "62877", "62871", "62872", "ID.1234567890123"} <= recipients  # batched and BSUID senders too
    assert not [r for r in caplog.records if r.name.startswith(("bot.server", "aiohttp"))]
    async with server.session.get("/healthz") as r:
        assert r.status == 200


def _mutate(rng: random.Random, value, depth: int = 0):
    choices = [None, True, 0, -1, 2**70, 1.5, "", "x" * rng.randint(0, 50), [], {}, "🙂", {"a": [1, {"b": None}]}]
    if isinstance(value, dict) and value:
        out = dict(value)
        key = rng.choice(list(out))
        action = rng.random()
        if action < 0.3:
            out.pop(key)
        elif action < 0.6:
            out[key] = rng.choice(choices)
        else:
            out[key] = _mutate(rng, out[key], depth + 1)
        return out
    if isinstance(value, list) and value:
        out = list(value)
        i = rng.randrange(len(out))
        out[i] = _mutate(rng, out[i], depth + 1) if rng.random() < 0.6 else rng.choice(choices)
        return out
    return rng.choice(choices)


@pytest.mark.faults
async def test_mutated_and_random_json_never_breaks_the_webhooks(server):
    rng = random.Random(20260101)
    tg = telegram_updates()
    statuses = []
    for i in range(150):
        update = _mutate(rng, copy.deepcopy(rng.choice(tg)))
        if isinstance(update, dict) and rng.random() < 0.7:
            update["update_id"] = 900_000 + i
        statuses.append(await send_tg(server, json.dumps(update).encode()))
        payload = _mutate(rng, copy.deepcopy(rng.choice(WHATSAPP_PAYLOADS + MORE_WHATSAPP_PAYLOADS)))
        payload = _mutate(rng, payload) if rng.random() < 0.5 else payload
        statuses.append(await send_wa(server, json.dumps(payload).encode()))
    for raw in (b"", b"\xff\xfe", b"[" * 5000 + b"]" * 5000, b'{"update_id": 1e999}', b"null"):
        statuses.append(await send_tg(server, raw))
        statuses.append(await send_wa(server, raw))
    await settle(server)
    assert all(_ok(s) for s in statuses), sorted(set(statuses))
    async with server.session.get("/healthz") as r:
        assert r.status == 200
