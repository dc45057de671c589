"""WhatsApp adapter pieces: signature, handshake, payload parsing (pywa's typed updates), the 24-hour window,
splitting, Graph retries."""

from __future__ import annotations

import hashlib
import hmac
import logging
import time

import pytest

from handlers.chat import Reply, UserRef
from handlers.whatsapp import (
    GraphClient,
    GraphConfig,
    GraphSendError,
    WhatsAppWebhook,
    parse_payload,
    verify_signature,
    verify_subscription,
)
from tests.auxil.platform_payloads import WHATSAPP_PAYLOADS, wa_text
from tests.handlers.whatsapp_payloads import wa_button_reply


def test_signature_check():
    body = b'{"a":1}'
    good = "sha256=" + hmac.new(b"k", body, hashlib.sha256).hexdigest()
    assert verify_signature("k", body, good)
    assert verify_signature("k", body, good.upper().replace("SHA256=", "sha256="))
    assert not verify_signature("k", body + b" ", good)
    assert not verify_signature("other", body, good)
    assert not verify_signature("k", body, None)
    assert not verify_signature("k", body, "sha1=" + good[7:])
    assert not verify_signature("", body, good)
    assert not verify_signature("k", body, "sha256=" + "é" * 64)  # not hex: refused, not an exception


def test_subscription_handshake():
    q = {"hub.mode": "subscribe", "hub.verify_token": "tok", "hub.challenge": "99"}
    assert verify_subscription(q, "tok") == (200, "99")
    assert verify_subscription({**q, "hub.verify_token": "x"}, "tok")[0] == 403
    assert verify_subscription({**q, "hub.mode": "unsubscribe"}, "tok")[0] == 403
    assert verify_subscription(q, "")[0] == 403


def test_parse_payload_kinds():
    kinds = [(m.message_id, m.kind) for p in WHATSAPP_PAYLOADS for m in parse_payload(p)]
    by_id = dict(kinds)
    assert by_id["w1"] == "text"
    assert {by_id[i] for i in ("w2", "w3", "w4", "w5", "w6", "w7", "w8", "w13", "w15")} == {"unsupported"}
    assert by_id["w9"] == by_id["w14"] == by_id["w16"] == "ignore"
    assert by_id["w10"] == by_id["w12"] == "feedback"
    assert by_id["w11"] == "text"  # a list reply's title is treated as the question
    assert len(kinds) == 16  # statuses, errors, account updates, other objects: no messages
    fb = next(m for p in WHATSAPP_PAYLOADS for m in parse_payload(p) if m.message_id == "w10")
    assert (fb.feedback_value, fb.feedback_trace) == ("down", "tr1")



def test_only_up_and_down_fb_ids_are_feedback():
    """The ids are read by handlers.chat.parse_feedback_id: an ``fb:`` id that is not 👍/👎 is an ordinary button."""
    (vote,) = parse_payload(wa_button_reply("fb:up", "👍 Membantu", msg_id="m1"))
    assert (vote.kind, vote.feedback_value, vote.feedback_trace) == ("feedback", "up", "")
    (other,) = parse_payload(wa_button_reply("fb:info:tr1", "Info beasiswa", msg_id="m2"))
    assert (other.kind, other.text) == ("text", "Info beasiswa")

@pytest.fixture
async def webhook(service, stores, fake_apis):
    graph = GraphClient(GraphConfig(fake_apis.graph_base, "PNID", "tok", backoff_seconds=0.01, retries=2))
    hook = WhatsAppWebhook(service, graph, stores.dedup, stores.state, app_secret="s", verify_token="v")
    yield hook
    await hook.close()


async def test_outside_the_24h_window_nothing_is_sent_and_it_is_logged(webhook, stores, fake_apis, caplog):
    user = UserRef("whatsapp", "62811")
    await stores.state.touch_inbound(user.key, time.time() - 25 * 3600)
    with caplog.at_level(logging.WARNING):
        await webhook.send_reply(user, Reply("Pengingat jadwal"))
    assert fake_apis.graph() == []
    assert any("older than 24 h" in r.getMessage() for r in caplog.records)
    await stores.state.touch_inbound(user.key)
    await webhook.send_reply(user, Reply("Pengingat jadwal"))
    assert len(fake_apis.graph("text")) == 1
    assert not await webhook.within_window(UserRef("whatsapp", "never-wrote"))


async def test_long_replies_are_split_at_the_length_limit(webhook, stores, fake_apis):
    user = UserRef("whatsapp", "62812")
    await stores.state.touch_inbound(user.key)
    text = " ".join(f"Kalimat nomor {i} tentang kurikulum." for i in range(300))
    await webhook.send_reply(user, Reply(text))
    bodies = [c.params["text"]["body"] for c in fake_apis.graph("text")]
    assert len(bodies) >= 3 and all(len(b) <= 4096 for b in bodies)
    assert all(b.endswith("kurikulum.") for b in bodies)


async def test_graph_client_gives_up_on_4xx_and_after_retries(fake_apis):
    graph = GraphClient(GraphConfig(fake_apis.graph_base, "PNID", "tok", backoff_seconds=0.01, retries=2))
    try:
        fake_apis.graph_failures.extend([400])
        with pytest.raises(GraphSendError, match="refused"):
            await graph.send_text("1", "x")
        assert len(fake_apis.graph()) == 1  # no retry on a 4xx
        fake_apis.graph_failures.extend([503, 503, 503])
        with pytest.raises(GraphSendError, match="3 attempts"):
            await graph.send_text("1", "x")
        assert len(fake_apis.graph()) == 4
        assert (await graph.send_text("1", "x")).startswith("wamid.")
    finally:
        await graph.close()


async def test_a_text_from_a_new_user_opens_the_window_and_gets_an_answer(webhook, fake_apis):
    msg = parse_payload(wa_text("Berapa SKS mata kuliah Basis Data?", msg_id="wamid.N", sender="62813"))[0]
    await webhook.process(msg)
    body = fake_apis.graph("text")[0].params["text"]["body"]
    assert "3 SKS" in body and "http://prodi.test/kurikulum/basis-data" in body
    await webhook.process(msg)  # same id again: deduplicated
    assert len(fake_apis.graph("text")) == 1


async def test_hapus_is_confirmed_even_though_it_deletes_the_inbound_time(webhook, fake_apis, stores):
    msg = parse_payload(wa_text("/hapus", msg_id="wamid.H", sender="62814"))[0]
    await webhook.process(msg)
    assert [c.params["text"]["body"] for c in fake_apis.graph("text")][-1].startswith("Semua data Anda")
    assert await stores.state.last_inbound("whatsapp:62814") is None


async def test_a_delivery_retried_after_the_window_gets_no_free_form_reply(webhook, fake_apis, caplog):
    payload = wa_text("Siapa ketua program studi?", msg_id="wamid.OLD", sender="62815")
    payload["entry"][0]["changes"][0]["value"]["messages"][0]["timestamp"] = str(int(time.time()) - 3 * 86400)
    with caplog.at_level(logging.WARNING):
        await webhook.process(parse_payload(payload)[0])
    assert fake_apis.graph("text") == []
    assert any("older than 24 h" in r.getMessage() for r in caplog.records)


async def test_queued_user_is_told_the_position_and_typing_is_renewed(service, stores, fake_apis, answerer):
    graph = GraphClient(GraphConfig(fake_apis.graph_base, "PNID", "tok", backoff_seconds=0.01, retries=2))
    hook = WhatsAppWebhook(service, graph, stores.dedup, stores.state, app_secret="s", verify_token="v",
                           typing_interval=0.05)
    answerer.queue_position = 2
    answerer.before_answer = lambda: fake_apis.wait_for(lambda: len(fake_apis.graph("read")) >= 2)
    try:
        await hook.process(parse_payload(wa_text("Apa saja laboratorium yang tersedia?", msg_id="wamid.Q",
                                                 sender="62816"))[0])
    finally:
        await hook.close()
    bodies = [c.params["text"]["body"] for c in fake_apis.graph("text")]
    assert "sedang antre (posisi 2)" in bodies[0]
    assert "laboratorium" in bodies[1]
    assert len(fake_apis.graph("read")) >= 2
