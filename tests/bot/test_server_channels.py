"""Both webhooks end to end through ``ServeApp``: real HTTP on loopback, real Redis, the fake Bot/Graph API."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json

import aiohttp
import pytest

from bot.app import ServeApp
from bot.settings import Settings
from handlers import texts
from tests.auxil.answerer import CorpusAnswerer
from tests.auxil.fake_apis import FakeApis
from tests.auxil.platform_payloads import wa_text
from tests.auxil.telegram_offline import photo_update, text_update

APP_SECRET = "wa-app-secret"
TG_SECRET = "tg-secret-token"


def sign(body: bytes, secret: str = APP_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@pytest.fixture
async def apis():
    apis = await FakeApis().start()
    yield apis
    await apis.close()


@pytest.fixture
async def served(apis, redis_url, data_dir):
    settings = Settings(
        _env_file=None,
        data_dir=data_dir,
        http_port=0,
        redis_url=redis_url,
        telegram_token="123:fake",
        telegram_webhook_url="https://bot.example.invalid/telegram/webhook",
        telegram_secret_token=TG_SECRET,
        telegram_api_base_url=apis.telegram_base,
        whatsapp_token="wa-token",
        whatsapp_phone_number_id="PNID",
        whatsapp_verify_token="verify-me",
        whatsapp_app_secret=APP_SECRET,
        whatsapp_graph_base_url=apis.graph_base,
        admin_ids="1",
        admin_token="adm",
    )
    answerer = CorpusAnswerer()
    reindexed: list = []

    async def search(query: str, k: int) -> list[dict]:
        return [{"chunk_id": "c1", "doc_id": "d1", "url": "http://prodi.test/x", "title": "X", "score": 1.0,
                 "text": query}][:k]

    app = ServeApp(
        settings,
        answerer=answerer,
        search=search,
        status_provider=lambda: {"index": {"version": "v1", "chunks": 3}, "runs": []},
        reindex_trigger=lambda who: reindexed.append(who) or "ok",
        index_ready=lambda: True,
        start_scheduler=False,
    )
    await app.start()
    session = aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}")
    app.test_session = session  # type: ignore[attr-defined]
    app.test_answerer = answerer  # type: ignore[attr-defined]
    app.reindexed = reindexed  # type: ignore[attr-defined]
    try:
        yield app
    finally:
        await session.close()
        await app.stop()


async def post_wa(session: aiohttp.ClientSession, payload: dict | bytes, signature: str | None = None):
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    headers = {"Content-Type": "application/json", "X-Hub-Signature-256": signature or sign(body)}
    async with session.post("/whatsapp/webhook", data=body, headers=headers) as response:
        return response.status, await response.text()


# --- WhatsApp ------------------------------------------------------------------------------------------------

async def test_whatsapp_verify_handshake(served):
    s = served.test_session
    ok = {"hub.mode": "subscribe", "hub.verify_token": "verify-me", "hub.challenge": "12345"}
    async with s.get("/whatsapp/webhook", params=ok) as r:
        assert r.status == 200 and await r.text() == "12345"
    async with s.get("/whatsapp/webhook", params={**ok, "hub.verify_token": "wrong"}) as r:
        assert r.status == 403


async def test_signed_whatsapp_text_gets_a_reply_with_a_source_link(served, apis):
    status, _ = await post_wa(served.test_session, wa_text("Siapa ketua program studi?"))
    assert status == 200
    await apis.wait_for(lambda: apis.graph("interactive"))
    texts_sent = [c.params["text"]["body"] for c in apis.graph("text")]
    assert len(texts_sent) == 1
    assert "Supriyono" in texts_sent[0] and "http://prodi.test/profil/ketua" in texts_sent[0]
    assert apis.graph("text")[0].params["to"] == "6281234"
    assert apis.graph("text")[0].headers["Authorization"] == "Bearer wa-token"
    read = apis.graph("read")
    assert read and read[0].params["message_id"] == "wamid.A1" and read[0].params["typing_indicator"]
    buttons = apis.graph("interactive")[0].params["interactive"]["action"]["buttons"]
    assert buttons[0]["reply"]["id"].startswith("fb:up:")


@pytest.mark.faults
async def test_bad_signature_is_refused_and_nothing_is_processed(served, apis):
    payload = wa_text("Siapa ketua program studi?", msg_id="wamid.BAD")
    status, _ = await post_wa(served.test_session, payload, signature=sign(b"other body"))
    assert status == 403
    status, _ = await post_wa(served.test_session, payload, signature="sha256=")
    assert status == 403
    body = json.dumps(payload).encode()
    async with served.test_session.post("/whatsapp/webhook", data=body) as r:  # no header at all
        assert r.status == 403
    await served.channel("whatsapp").webhook.drain()
    assert apis.graph() == [] and served.test_answerer.calls == []


@pytest.mark.faults
async def test_three_deliveries_of_one_message_give_one_reply(served, apis):
    payload = wa_text("Berapa SKS mata kuliah Basis Data?", msg_id="wamid.DUP")
    for _ in range(3):
        assert (await post_wa(served.test_session, payload))[0] == 200
    await served.channel("whatsapp").webhook.drain()
    assert len(apis.graph("text")) == 1
    assert len(served.test_answerer.calls) == 1


@pytest.mark.faults
async def test_malformed_json_is_400_and_odd_shapes_are_acknowledged(served, apis):
    assert (await post_wa(served.test_session, b"{not json"))[0] == 400
    for odd in ([], {"entry": "x"}, {"entry": [{"changes": [{"value": {"messages": [{"id": 5}]}}]}]}, None, 7):
        assert (await post_wa(served.test_session, json.dumps(odd).encode()))[0] == 200
    await served.channel("whatsapp").webhook.drain()
    assert apis.graph() == []


async def test_whatsapp_media_gets_notice_buttons_give_feedback_statuses_ignored(served, apis):
    image = wa_text("", msg_id="wamid.IMG")
    msg = image["entry"][0]["changes"][0]["value"]["messages"][0]
    msg["type"] = "image"
    msg.pop("text")
    msg["image"] = {"id": "media-1", "mime_type": "image/jpeg"}
    await post_wa(served.test_session, image)
    await served.channel("whatsapp").webhook.drain()
    assert [c.params["text"]["body"] for c in apis.graph("text")] == [texts.TEXT_ONLY]

    status = {"entry": [{"changes": [{"field": "messages", "value": {"statuses": [
        {"id": "wamid.X", "status": "delivered", "recipient_id": "6281234", "timestamp": "1"}]}}]}]}
    await post_wa(served.test_session, status)
    await served.channel("whatsapp").webhook.drain()
    assert len(apis.graph()) == 1  # nothing new

    button = wa_text("", msg_id="wamid.BTN")
    msg = button["entry"][0]["changes"][0]["value"]["messages"][0]
    msg["type"] = "interactive"
    msg.pop("text")
    msg["interactive"] = {"type": "button_reply", "button_reply": {"id": "fb:up:trace123", "title": "👍 Membantu"}}
    await post_wa(served.test_session, button)
    await served.channel("whatsapp").webhook.drain()
    entries = await served.stores.feedback.entries("whatsapp:6281234")
    assert [(e.trace_id, e.value) for e in entries] == [("trace123", "up")]
    assert apis.graph("text")[-1].params["text"]["body"] == texts.FEEDBACK_THANKS_UP


async def test_graph_api_5xx_and_429_are_retried(served, apis):
    served.channel("whatsapp").webhook.graph.config = dataclasses.replace(served.channel("whatsapp").webhook.graph.config, backoff_seconds=0.01)
    apis.graph_failures.extend([500, 429])  # the next two Graph calls fail, whichever they are
    await post_wa(served.test_session, wa_text("Apa saja laboratorium yang tersedia?", msg_id="wamid.R"))
    await served.channel("whatsapp").webhook.drain()
    assert apis.graph_failures == []
    failed = [c for c in apis.graph() if c.status != 200]
    assert sorted(c.status for c in failed) == [429, 500]
    delivered = [c for c in apis.graph("text") if c.status == 200]
    assert len(delivered) == 1 and "laboratorium" in delivered[0].params["text"]["body"]
    assert [c.status for c in apis.graph("interactive")][-1] == 200


# --- Telegram ------------------------------------------------------------------------------------------------

async def post_tg(session: aiohttp.ClientSession, payload, secret: str | None = TG_SECRET):
    headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret is not None else {}
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    async with session.post("/telegram/webhook", data=body, headers=headers) as r:
        return r.status


async def test_set_webhook_called_with_url_and_secret(served, apis):
    call = apis.telegram("setWebhook")[0]
    assert call.params["url"] == "https://bot.example.invalid/telegram/webhook"
    assert call.params["secret_token"] == TG_SECRET


async def test_telegram_webhook_text_and_start_get_replies(served, apis):
    assert await post_tg(served.test_session, text_update("/start", user_id=501)) == 200
    await apis.wait_for(lambda: len(apis.telegram("sendMessage")) >= 1)
    assert await post_tg(served.test_session, text_update("Siapa ketua program studi?", user_id=501)) == 200
    await apis.wait_for(lambda: len(apis.telegram("sendMessage")) >= 2)
    sent = [c.params["text"] for c in apis.telegram("sendMessage")]
    assert "Halo" in sent[0]
    assert "Supriyono" in sent[1] and 'href="http://prodi.test/profil/ketua"' in sent[1]


async def test_telegram_photo_and_non_admin_reindex(served, apis):
    await post_tg(served.test_session, photo_update(user_id=502))
    await post_tg(served.test_session, text_update("/reindex", user_id=502))
    await apis.wait_for(lambda: len(apis.telegram("sendMessage")) >= 2)
    sent = sorted(c.params["text"] for c in apis.telegram("sendMessage"))
    assert sent == sorted([texts.TEXT_ONLY, texts.ADMIN_ONLY])
    assert served.reindexed == []


@pytest.mark.faults
async def test_telegram_wrong_secret_is_403_and_junk_is_a_deliberate_4xx(served, apis):
    assert await post_tg(served.test_session, text_update("/start"), secret="nope") == 403
    assert await post_tg(served.test_session, text_update("/start"), secret=None) == 403
    assert await post_tg(served.test_session, b"garbage") == 400
    assert await post_tg(served.test_session, {"no": "update_id"}) == 400
    assert await post_tg(served.test_session, {"update_id": 5, "message": {"weird": True}}) == 200
    assert await post_tg(served.test_session, {"update_id": 6, "poll": {"id": "p"}}) == 200
    async with served.test_session.get("/healthz") as r:
        assert r.status == 200  # still alive
    assert apis.telegram("sendMessage") == []
