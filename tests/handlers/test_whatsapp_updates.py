"""What students really send on WhatsApp, through ``WhatsAppWebhook.accept`` (signature, pywa's typed updates) with
real Redis and the loopback Graph API stand-in: button and list replies, reactions, location, voice, an edited
message, a sender known only by the business-scoped user id, batched deliveries, shapes pywa cannot read."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import socket

import pytest

from handlers import texts
from handlers.whatsapp import GraphClient, GraphConfig, GraphSendError, WhatsAppWebhook
from tests.handlers.whatsapp_payloads import (
    wa_batch,
    wa_bsuid_text,
    wa_button_reply,
    wa_edit,
    wa_list_reply,
    wa_location,
    wa_message,
    wa_reaction,
    wa_template_button,
    wa_voice,
)

APP_SECRET = "app-secret-never-logged"
TOKEN = "graph-token-never-logged"


def sign(body: bytes, secret: str = APP_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@pytest.fixture
async def hook(service, stores, fake_apis):
    graph = GraphClient(GraphConfig(fake_apis.graph_base, "PNID", TOKEN, backoff_seconds=0.01, retries=2))
    webhook = WhatsAppWebhook(service, graph, stores.dedup, stores.state, app_secret=APP_SECRET, verify_token="v")
    yield webhook
    await webhook.close()


async def deliver(hook: WhatsAppWebhook, payload: dict) -> int:
    body = json.dumps(payload).encode()
    status, _ = hook.accept(body, sign(body))
    await hook.drain()
    return status


def bodies(fake_apis) -> list[str]:
    return [c.params["text"]["body"] for c in fake_apis.graph("text")]


async def test_feedback_buttons_store_the_vote_and_thank_the_user(hook, stores, fake_apis, answerer):
    assert await deliver(hook, wa_button_reply("fb:up:tr-1", "👍 Membantu", msg_id="wamid.FB1")) == 200
    assert await deliver(hook, wa_template_button("fb:down:tr-2", "👎 Kurang", msg_id="wamid.FB2")) == 200
    assert await deliver(hook, wa_list_reply("fb:up:tr-3", "Membantu", msg_id="wamid.FB3")) == 200
    entries = await stores.feedback.entries("whatsapp:62877")
    assert sorted((e.trace_id, e.value) for e in entries) == [("tr-1", "up"), ("tr-2", "down"), ("tr-3", "up")]
    assert bodies(fake_apis) == [texts.FEEDBACK_THANKS_UP, texts.FEEDBACK_THANKS_DOWN, texts.FEEDBACK_THANKS_UP]
    assert answerer.calls == []  # a vote is not a question


async def test_plain_button_and_list_replies_are_the_users_text(hook, fake_apis, answerer):
    await deliver(hook, wa_list_reply("opt-lab", "Laboratorium", msg_id="wamid.L1", description="Daftar lab"))
    await deliver(hook, wa_button_reply("ketua", "Ketua program studi", msg_id="wamid.B1"))
    await deliver(hook, wa_template_button("sks", "SKS Basis Data", msg_id="wamid.T1"))
    assert [question for question, _history in answerer.calls] == [
        "Laboratorium", "Ketua program studi", "SKS Basis Data"]
    sent = bodies(fake_apis)
    assert "laboratorium" in sent[0] and "Supriyono" in sent[1] and "3 SKS" in sent[2]
    assert len(fake_apis.graph("interactive")) == 3  # each answer carries its 👍/👎 buttons


async def test_reactions_are_ignored_politely(hook, stores, fake_apis, answerer, caplog):
    with caplog.at_level(logging.DEBUG, logger="handlers.whatsapp"):
        assert await deliver(hook, wa_reaction("👍", msg_id="wamid.R1")) == 200
        assert await deliver(hook, wa_reaction("", msg_id="wamid.R2")) == 200  # reaction removed
    assert fake_apis.graph() == [] and answerer.calls == []
    assert await stores.state.last_inbound("whatsapp:62877") is None
    ignored = [r for r in caplog.records if "reaction" in r.getMessage() and "ignored" in r.getMessage()]
    assert len(ignored) == 2 and all(r.levelno == logging.DEBUG for r in ignored)


async def test_location_and_voice_get_the_polite_text_only_notice(hook, stores, fake_apis, answerer, caplog):
    with caplog.at_level(logging.INFO, logger="handlers.whatsapp"):
        await deliver(hook, wa_location(msg_id="wamid.LOC"))
        await deliver(hook, wa_voice(msg_id="wamid.VOICE"))
        await deliver(hook, wa_voice(msg_id="wamid.VOICE"))  # redelivered: still one notice
    assert bodies(fake_apis) == [texts.TEXT_ONLY, texts.TEXT_ONLY]
    assert {c.params["to"] for c in fake_apis.graph("text")} == {"62877"}
    assert answerer.calls == []
    assert await stores.state.last_inbound("whatsapp:62877") is not None  # the window is open for the answer
    assert not [r for r in caplog.records if "could not be read" in r.getMessage()], "pywa read both types"


async def test_an_edited_message_is_answered_once_with_the_edited_text(hook, fake_apis, answerer):
    await deliver(hook, wa_message("text", msg_id="wamid.E1", text={"body": "Berapa SKS mata kuliah Basis Data?"}))
    edit = wa_edit("wamid.E1", "Siapa ketua program studi?", msg_id="wamid.E1-EDIT")
    await deliver(hook, edit)
    await deliver(hook, edit)  # the same edit delivered again
    assert [question for question, _history in answerer.calls] == [
        "Berapa SKS mata kuliah Basis Data?", "Siapa ketua program studi?"]
    sent = bodies(fake_apis)
    assert len(sent) == 2 and "3 SKS" in sent[0] and "Supriyono" in sent[1]
    assert {c.params["message_id"] for c in fake_apis.graph("read")} == {"wamid.E1"}  # the edit marks the original


async def test_every_message_of_a_batched_delivery_is_answered_to_its_sender(hook, fake_apis, answerer):
    batch = wa_batch(
        wa_message("text", msg_id="wamid.M1", sender="62871", text={"body": "Siapa ketua program studi?"}),
        wa_message("text", msg_id="wamid.M2", sender="62872", text={"body": "Apa saja laboratorium?"}),
        wa_reaction("🙏", msg_id="wamid.M3", sender="62873"),
    )
    assert await deliver(hook, batch) == 200
    by_recipient = {c.params["to"]: c.params["text"]["body"] for c in fake_apis.graph("text")}
    assert set(by_recipient) == {"62871", "62872"}
    assert "Supriyono" in by_recipient["62871"] and "laboratorium" in by_recipient["62872"]


async def test_a_sender_known_only_by_the_business_scoped_id_gets_the_reply(hook, stores, fake_apis):
    await deliver(hook, wa_bsuid_text("Siapa ketua program studi?", msg_id="wamid.U1", user_id="ID.1234567890123"))
    call = fake_apis.graph("text")[0]
    assert call.params["recipient"] == "ID.1234567890123" and "to" not in call.params
    assert "Supriyono" in call.params["text"]["body"]
    assert await stores.state.last_inbound("whatsapp:ID.1234567890123") is not None


async def test_shapes_pywa_cannot_read_and_new_types_still_get_the_notice(hook, fake_apis, caplog):
    broken = wa_message("image", msg_id="wamid.BROKEN", image={"caption": "tanpa id media"})
    future = wa_message("poll_vote", msg_id="wamid.FUTURE", poll_vote={"option": 1})
    with caplog.at_level(logging.WARNING, logger="handlers.whatsapp"):
        await deliver(hook, broken)
        await deliver(hook, future)
    assert bodies(fake_apis) == [texts.TEXT_ONLY, texts.TEXT_ONLY]
    unread = [r.getMessage() for r in caplog.records if "could not be read" in r.getMessage()]
    assert len(unread) == 1 and "wamid.BROKEN" in unread[0] and "tanpa id media" not in unread[0]


async def test_secrets_are_never_logged(hook, fake_apis, caplog):
    with caplog.at_level(logging.DEBUG):
        payload = wa_message("text", msg_id="wamid.S1", text={"body": "Siapa ketua program studi?"})
        body = json.dumps(payload).encode()
        assert hook.accept(body, sign(body, "wrong-secret"))[0] == 403
        assert await deliver(hook, payload) == 200
    assert fake_apis.graph("text")[0].headers["Authorization"] == f"Bearer {TOKEN}"
    logged = "\n".join(f"{r.getMessage()} {r.args!r}" for r in caplog.records)
    assert TOKEN not in logged and APP_SECRET not in logged


async def test_network_errors_are_retried_then_reported(fake_apis):
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    graph = GraphClient(GraphConfig(f"http://127.0.0.1:{port}/v26.0", "PNID", TOKEN, backoff_seconds=0.01,
                                    retries=2, timeout_seconds=5))
    try:
        with pytest.raises(GraphSendError, match=r"3 attempts \(ConnectError"):
            await graph.send_text("62877", "halo")
    finally:
        await graph.close()
