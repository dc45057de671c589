"""Telegram handlers with python-telegram-bot v22: an offline bot for updates that must stay silent, and the
loopback Bot API stand-in (through TELEGRAM_API_BASE_URL's builder path) for updates that get replies."""

from __future__ import annotations

import asyncio

import pytest
from telegram.ext import Application

from bot.channels.telegram import build_telegram_application
from handlers import texts
from handlers.telegram import TelegramHandlers, escape_and_split
from tests.auxil.telegram_offline import (
    OfflineRequest,
    callback_update,
    channel_post_update,
    edited_text_update,
    feed,
    member_update,
    photo_update,
    text_update,
)


@pytest.fixture
async def offline_app(service):
    request = OfflineRequest()
    app = (
        Application.builder()
        .token("123:offline")
        .request(request)
        .get_updates_request(OfflineRequest())
        .updater(None)
        .build()
    )
    TelegramHandlers(service).register(app)
    errors: list[BaseException] = []

    async def record(update, context):
        errors.append(context.error)

    app.add_error_handler(record)
    await app.initialize()
    app.request_log = request  # type: ignore[attr-defined]
    app.errors = errors  # type: ignore[attr-defined]
    yield app
    await app.shutdown()


@pytest.mark.parametrize(
    "factory",
    [
        lambda: channel_post_update(),
        lambda: member_update(),
        lambda: text_update("obrolan biasa di grup", chat_id=-100500, chat_type="supergroup"),
        lambda: edited_text_update("pesan yang disunting", chat_type="group"),
        lambda: photo_update(chat_type="group"),
        lambda: text_update("/start@another_bot", chat_id=-100500, chat_type="group"),
    ],
    ids=["channel-post", "member-update", "group-chatter", "group-edit", "group-photo", "other-bots-command"],
)
async def test_updates_that_must_be_ignored_make_no_network_call(offline_app, factory):
    await feed(offline_app, factory())
    assert offline_app.request_log.attempts == []
    assert offline_app.errors == []


async def test_offline_bot_fails_on_any_network_call(offline_app):
    """The stand-in is strict: a private text would need sendMessage, which raises and reaches the error handler."""
    await feed(offline_app, text_update("/help"))
    assert offline_app.request_log.attempts[0] == "sendMessage"
    assert offline_app.errors and "offline bot" in str(offline_app.errors[0])


async def test_text_gets_an_html_answer_with_source_link_buttons_and_typing(tg, fake_apis, answerer):
    answerer.delay = 0.3  # an answer that takes a moment (the in-memory stores leave no time for the typing request)
    await feed(tg, text_update("Siapa ketua program studi?"))
    sent = fake_apis.telegram("sendMessage")
    assert len(sent) == 1
    params = sent[0].params
    assert params["parse_mode"] == "HTML"
    assert "Supriyono" in params["text"]
    assert '<a href="http://prodi.test/profil/ketua">Ketua Program Studi</a>' in params["text"]
    buttons = params["reply_markup"]["inline_keyboard"][0]
    assert [b["text"] for b in buttons] == ["👍", "👎"]
    assert buttons[0]["callback_data"].startswith("fb:up:")
    assert fake_apis.telegram("sendChatAction")[0].params["action"] == "typing"


async def test_start_and_help_get_replies(tg, fake_apis):
    await feed(tg, text_update("/start"))
    await feed(tg, text_update("/help"))
    texts_sent = [c.params["text"] for c in fake_apis.telegram("sendMessage")]
    assert "Halo" in texts_sent[0]
    assert "/sumber" in texts_sent[1]


async def test_photo_gets_the_text_only_notice(tg, fake_apis):
    await feed(tg, photo_update(caption="ini jadwal?"))
    assert [c.params["text"] for c in fake_apis.telegram("sendMessage")] == [texts.TEXT_ONLY]


async def test_reindex_from_non_admin_is_refused(tg, fake_apis, reindex_calls):
    await feed(tg, text_update("/reindex", user_id=99))
    assert [c.params["text"] for c in fake_apis.telegram("sendMessage")] == [texts.ADMIN_ONLY]
    assert reindex_calls == []
    await feed(tg, text_update("/reindex", user_id=1))
    assert "run r-1" in fake_apis.telegram("sendMessage")[-1].params["text"]
    assert reindex_calls == ["telegram:1"]


async def test_group_answers_only_mentions(tg, fake_apis, answerer):
    await feed(tg, text_update("Siapa ketua program studi?", chat_id=-1009, chat_type="group"))
    assert fake_apis.telegram("sendMessage") == []
    await feed(tg, text_update("@prodi_test_bot Siapa ketua program studi?", chat_id=-1009, chat_type="group"))
    assert len(fake_apis.telegram("sendMessage")) == 1
    assert answerer.calls[-1][0] == "Siapa ketua program studi?"  # the mention is stripped


async def test_edited_private_message_gets_the_policy_hint_and_is_not_reanswered(tg, fake_apis, answerer):
    await feed(tg, edited_text_update("Siapa ketua program studi?"))
    assert [c.params["text"] for c in fake_apis.telegram("sendMessage")] == [texts.EDITED_IGNORED]
    assert answerer.calls == []


async def test_feedback_button_is_stored_and_the_query_always_answered(tg, fake_apis, stores):
    await feed(tg, text_update("Siapa ketua program studi?"))
    data = fake_apis.telegram("sendMessage")[0].params["reply_markup"]["inline_keyboard"][0][1]["callback_data"]
    await feed(tg, callback_update(data))
    trace = data.split(":", 2)[2]
    assert [(e.trace_id, e.value) for e in await stores.feedback.entries("telegram:4242")] == [(trace, "down")]
    answered = fake_apis.telegram("answerCallbackQuery")
    assert len(answered) == 1 and "umpan balik" in answered[0].params["text"]
    await feed(tg, callback_update("something-else"))
    assert len(fake_apis.telegram("answerCallbackQuery")) == 2


async def test_errors_reach_the_error_handler_and_the_user_gets_a_polite_message(tg, fake_apis, service, caplog):
    async def broken(user, text, on_position=None):
        raise RuntimeError("boom")

    service.handle = broken  # a bug anywhere below the handler
    await feed(tg, text_update("Siapa ketua program studi?"))
    assert [c.params["text"] for c in fake_apis.telegram("sendMessage")] == [texts.ERROR]
    record = next(r for r in caplog.records if "error while handling" in r.getMessage())
    assert record.exc_info is not None


async def test_queue_position_and_typing_resent_while_waiting(service, fake_apis, answerer):
    answerer.queue_position = 3
    # hold the answer open until the typing action was sent at least twice (no timing assumptions)
    answerer.before_answer = lambda: fake_apis.wait_for(lambda: len(fake_apis.telegram("sendChatAction")) >= 2)
    app = build_telegram_application(
        "123:fake", TelegramHandlers(service, typing_interval=0.05), base_url=fake_apis.telegram_base, webhook=True
    )
    await app.initialize()
    try:
        await feed(app, text_update("Siapa ketua program studi?"))
    finally:
        await app.shutdown()
    sent = [c.params["text"] for c in fake_apis.telegram("sendMessage")]
    assert sent[0] == texts.QUEUED.format(position=3)
    assert "sedang antre (posisi 3)" in sent[0]
    assert len(fake_apis.telegram("sendChatAction")) >= 2


@pytest.mark.faults
def test_long_replies_are_split_under_4096_at_sentence_ends_and_escaped():
    text = " ".join(f"Kalimat <nomor> {i} & seterusnya." for i in range(400))
    parts = escape_and_split(text)
    assert len(parts) >= 2
    assert all(len(p) <= 4096 for p in parts)
    assert all(p.endswith("seterusnya.") for p in parts)
    assert "&lt;nomor&gt;" in parts[0] and "&amp;" in parts[0] and "<nomor>" not in parts[0]


async def test_rate_limit_message_on_telegram(tg, fake_apis):
    for _ in range(6):
        await feed(tg, text_update("/help", user_id=77))
    assert "terlalu cepat" in fake_apis.telegram("sendMessage")[-1].params["text"]
    await asyncio.sleep(0)


async def test_group_reply_to_the_bot_is_answered(tg, fake_apis):
    from tests.auxil.fake_apis import BOT_USER

    bot_message = {"message_id": 1, "date": 0, "chat": {"id": -1009, "type": "group", "title": "G"},
                   "from": BOT_USER, "text": "jawaban sebelumnya"}
    await feed(tg, text_update("Berapa SKS Basis Data?", chat_id=-1009, chat_type="group",
                               reply_to_message=bot_message))
    assert "3 SKS" in fake_apis.telegram("sendMessage")[0].params["text"]


async def test_sumber_renders_links(tg, fake_apis):
    await feed(tg, text_update("Berapa SKS mata kuliah Basis Data?", user_id=61))
    await feed(tg, text_update("/sumber", user_id=61))
    text = fake_apis.telegram("sendMessage")[-1].params["text"]
    assert text.startswith("Sumber jawaban terakhir:")
    assert '<a href="http://prodi.test/kurikulum/basis-data">Mata Kuliah Basis Data</a>' in text
