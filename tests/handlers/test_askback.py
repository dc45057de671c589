"""Asking back, the channel side: an ``Answer`` with ``choices`` becomes a ``Reply`` of kind ``askback`` (no 👍/👎,
not in the question log, both turns in the history), every channel shows the choices as buttons, and a press is the
student typing the choice. Over the real ChatService and its stores (in memory, then Redis), the loopback Bot API and Graph API stand-ins,
and ``AskBackAnswerer`` (tests/auxil/answerer.py), which asks back on "emailnya apa?" and records what it is asked."""

from __future__ import annotations

import time

import pytest

from bot import wiring
from bot.channels.base import ChannelContext
from bot.channels.console import CONSOLE_RATE_LIMIT, ConsoleChannel
from bot.settings import Settings
from generation.types import Answer
from handlers import texts
from handlers.chat import ChatService, Reply, UserRef
from handlers.choices import parse_pick_id, pick_ids, short_titles
from handlers.web import WebApi
from handlers.whatsapp import GraphClient, GraphConfig, WhatsAppWebhook, parse_payload
from tests.auxil.answerer import ASK_BACK_CHOICES, ASK_BACK_TEXT, AskBackAnswerer
from tests.auxil.platform_payloads import wa_text
from tests.auxil.telegram_offline import callback_update, feed, text_update
from tests.handlers.whatsapp_payloads import wa_button_reply

ALICE = UserRef("telegram", "42")
RINA, BUDI = ASK_BACK_CHOICES
# a candidate too long for Telegram's 64-byte callback data: its button carries the index
LONG = "Prof. Dr. Ir. Bambang Sudibyo Hadiwijoyo, M.Sc., Ph.D. (Ketua Laboratorium Jaringan)"


@pytest.fixture
def answerer() -> AskBackAnswerer:
    return AskBackAnswerer()


class RecordingLog:
    """A question log that keeps what it is given."""

    def __init__(self) -> None:
        self.records: list[dict] = []

    async def record(self, **fields) -> None:
        self.records.append(fields)

    async def feedback(self, trace_id: str, value: str) -> None:
        return None

    async def forget(self, user_key: str) -> None:
        return None


# --- the contract ------------------------------------------------------------------------------------------------

def test_answer_and_reply_carry_choices_in_their_json():
    plain = Answer("x", False, (), 1.0, 1, "supported", 1.0)
    assert plain.choices == () and plain.as_json()["choices"] == []
    asking = Answer("Yang mana?", False, (), 0.5, 1, "ASK_BACK", 1.0, choices=(RINA, BUDI))
    assert asking.as_json()["choices"] == [RINA, BUDI]
    assert Reply("ok").as_json()["choices"] == []
    reply = Reply("Yang mana?", kind="askback", answer=asking, choices=(RINA, BUDI))
    assert reply.as_json()["choices"] == [RINA, BUDI] and reply.as_json()["kind"] == "askback"


def test_stop_reason_ask_back():
    from generation.pipeline import StopReason

    assert StopReason.ASK_BACK == "ASK_BACK"


def test_pick_ids_carry_the_text_when_it_fits_else_the_index():
    assert pick_ids((RINA, BUDI), max_bytes=64) == [f"pick:{RINA}", f"pick:{BUDI}"]
    assert pick_ids((RINA, LONG, "2024"), max_bytes=64) == [f"pick:{RINA}", "pick:1", "pick:2"]
    assert parse_pick_id(f"pick:{BUDI}") == BUDI
    assert parse_pick_id("pick:1") == 1
    assert parse_pick_id("fb:up:abc") is None and parse_pick_id("") is None and parse_pick_id("pick") is None


def test_short_titles_fit_twenty_characters_and_stay_distinct():
    assert short_titles((RINA, BUDI), 20) == ["Dr. Rina Wulandari", "Budi Santoso"]
    titles = short_titles(("Kepala Laboratorium Jaringan Komputer", "Kepala Laboratorium Jaringan Nirkabel"), 20)
    assert all(len(t) <= 20 for t in titles) and len(set(titles)) == 2
    assert short_titles(("Ani", "Ani"), 20) == ["1. Ani", "2. Ani"]


# --- ChatService -------------------------------------------------------------------------------------------------

async def test_an_ambiguous_follow_up_asks_back_and_the_pick_continues_the_conversation(service, answerer, stores):
    log = RecordingLog()
    service.question_log = log
    first = await service.handle(ALICE, "Siapa ketua program studi?")
    asked = await service.handle(ALICE, "emailnya apa?")
    assert asked.kind == "askback" and asked.text == ASK_BACK_TEXT
    assert asked.choices == ASK_BACK_CHOICES
    assert asked.feedback_id == "" and asked.sources == ()  # no 👍/👎: not an answer, not a refusal
    assert asked.as_json()["choices"] == list(ASK_BACK_CHOICES) and asked.as_json()["feedback_id"] == ""
    assert [r["question"] for r in log.records] == ["Siapa ketua program studi?"]
    history = await stores.conversations.history(ALICE.key)
    assert [(m.role, m.text) for m in history[-2:]] == [("user", "emailnya apa?"), ("assistant", ASK_BACK_TEXT)]
    assert await stores.state.last_choices(ALICE.key) == ASK_BACK_CHOICES
    sumber = await service.handle(ALICE, "/sumber")  # the last answer is still the last real one
    assert [s.url for s in sumber.sources] == [s.url for s in first.sources]

    picked = await service.handle(ALICE, BUDI)  # a press is the student typing the choice
    question, seen = answerer.calls[-1]
    assert question == BUDI
    assert [(m.role, m.text) for m in seen[-2:]] == [("user", "emailnya apa?"), ("assistant", ASK_BACK_TEXT)]
    assert picked.kind == "answer" and "santoso@prodi.test" in picked.text and picked.feedback_id
    assert [r["question"] for r in log.records] == ["Siapa ketua program studi?", BUDI]


async def test_an_ask_back_without_choices_is_no_answer_and_clears_the_older_choices(service, stores):
    """ "sinta id bu" asks for a name among many people: an ask-back with no buttons. It is still no answer: no
    👍/👎, no question-log row, /sumber keeps the last real answer, and an older ask-back's choices are gone (a
    number typed next picks nothing)."""
    service.answerer = AskBackAnswerer(choices=(), ambiguous=("sinta id bu",))
    log = RecordingLog()
    service.question_log = log
    await stores.state.set_last_choices(ALICE.key, ASK_BACK_CHOICES)
    first = await service.handle(ALICE, "Siapa ketua program studi?")
    asked = await service.handle(ALICE, "sinta id bu")
    assert asked.kind == "askback" and asked.text == ASK_BACK_TEXT and asked.choices == ()
    assert asked.feedback_id == "" and asked.sources == ()
    assert [r["question"] for r in log.records] == ["Siapa ketua program studi?"]
    assert await stores.state.last_choices(ALICE.key) == ()
    sumber = await service.handle(ALICE, "/sumber")
    assert [s.url for s in sumber.sources] == [s.url for s in first.sources]


async def test_last_choices_expire_and_hapus_forgets_them(stores):
    await stores.state.set_last_choices("web:s1", (RINA, BUDI), ttl_seconds=60)
    assert await stores.state.last_choices("web:s1") == (RINA, BUDI)
    if stores.client is not None:  # on Redis: the key carries the TTL
        assert 0 < await stores.client.ttl("prodibot:user:web:s1:choices") <= 60
    await stores.state.delete_user("web:s1")
    assert await stores.state.last_choices("web:s1") == ()
    from storage.dedup import UserState

    now = [1000.0]
    memory = UserState(clock=lambda: now[0])
    await memory.set_last_choices("u", (RINA,), ttl_seconds=10)
    assert await memory.last_choices("u") == (RINA,)
    now[0] += 11
    assert await memory.last_choices("u") == ()


async def test_web_api_json_has_the_choices(service):
    api = WebApi(service)
    data = await api.chat({"message": "emailnya apa?", "session_id": "s-ask"})
    assert data["kind"] == "askback" and data["choices"] == list(ASK_BACK_CHOICES)
    assert data["feedback_id"] == "" and data["sources"] == []


async def test_console_numbers_the_choices_and_a_number_picks_one(data_dir):
    settings = Settings(_env_file=None, data_dir=data_dir, redis_url="redis://127.0.0.1:1/0")  # never used
    stores = wiring.build_channel_stores(settings, in_memory=True)
    answerer = AskBackAnswerer()
    service = ChatService(answerer, stores.conversations, stores.feedback, stores.state,
                          rate_limit_per_minute=CONSOLE_RATE_LIMIT)
    typed = iter(["emailnya apa?", "2", "2", "/keluar"])
    out: list[str] = []
    console = ConsoleChannel(ChannelContext(settings=settings, service=service, stores=stores),
                             read_line=lambda prompt: next(typed), write=out.append)
    assert await console.run() == 0
    assert f"  1. {RINA}" in out and f"  2. {BUDI}" in out
    assert [q for q, _ in answerer.calls] == ["emailnya apa?", BUDI, "2"]  # after an answer, "2" is just "2"


# --- Telegram ----------------------------------------------------------------------------------------------------

async def test_telegram_shows_the_choices_as_inline_buttons_and_a_press_is_the_choice(tg, fake_apis, answerer):
    await feed(tg, text_update("Siapa ketua program studi?"))
    await feed(tg, text_update("emailnya apa?"))
    asked = fake_apis.telegram("sendMessage")[-1].params
    assert asked["text"] == ASK_BACK_TEXT
    keyboard = asked["reply_markup"]["inline_keyboard"]
    assert [[(b["text"], b["callback_data"]) for b in row] for row in keyboard] == [
        [(RINA, f"pick:{RINA}")], [(BUDI, f"pick:{BUDI}")]]  # one row each, no 👍/👎
    await feed(tg, callback_update(keyboard[1][0]["callback_data"]))
    assert answerer.calls[-1][0] == BUDI
    assert [(m.role, m.text) for m in answerer.calls[-1][1][-2:]] == [("user", "emailnya apa?"),
                                                                       ("assistant", ASK_BACK_TEXT)]
    methods = [c.method for c in fake_apis.calls]
    answered = methods.index("answerCallbackQuery")
    assert answered < len(methods) - 1 - methods[::-1].index("sendMessage")  # the query first, then the reply
    reply = fake_apis.telegram("sendMessage")[-1].params
    assert "santoso@prodi.test" in reply["text"]
    assert [b["text"] for b in reply["reply_markup"]["inline_keyboard"][0]] == ["👍", "👎"]
    assert fake_apis.telegram("editMessageReplyMarkup")  # the choices are taken off the ask-back


async def test_telegram_long_choice_goes_by_index_and_a_stale_pick_gets_a_note(service, fake_apis, answerer, tg):
    answerer.choices = (RINA, LONG)
    await feed(tg, text_update("emailnya apa?"))
    keyboard = fake_apis.telegram("sendMessage")[-1].params["reply_markup"]["inline_keyboard"]
    assert [row[0]["callback_data"] for row in keyboard] == [f"pick:{RINA}", "pick:1"]
    assert all(len(row[0]["callback_data"].encode()) <= 64 for row in keyboard)
    await feed(tg, callback_update("pick:1"))
    assert answerer.calls[-1][0] == LONG

    calls = len(answerer.calls)
    await feed(tg, callback_update("pick:7"))  # no such choice
    update = callback_update("pick:1")  # a button of an older ask-back: its label is not today's choice 1
    update["callback_query"]["message"]["reply_markup"] = {
        "inline_keyboard": [[{"text": "Dosen lain", "callback_data": "pick:1"}]]}
    answerer.choices = (BUDI, "Siti Aminah, M.Pd. (koordinator program magang dan kerja praktik)")
    await feed(tg, text_update("emailnya apa?"))
    await feed(tg, update)
    await feed(tg, callback_update("pick:0", user_id=999))  # a user who was never asked back
    assert len(answerer.calls) == calls + 1  # only the second ask-back reached the answerer
    notes = [c.params.get("text") for c in fake_apis.telegram("answerCallbackQuery")]
    assert notes[-3:] == [texts.CHOICE_STALE] * 3


# --- WhatsApp ----------------------------------------------------------------------------------------------------

@pytest.fixture
async def webhook(service, stores, fake_apis):
    graph = GraphClient(GraphConfig(fake_apis.graph_base, "PNID", "tok", backoff_seconds=0.01, retries=2))
    hook = WhatsAppWebhook(service, graph, stores.dedup, stores.state, app_secret="s", verify_token="v",
                           typing_interval=60)
    yield hook
    await hook.close()


async def test_whatsapp_sends_reply_buttons_and_a_button_reply_is_the_choice(webhook, fake_apis, answerer):
    await webhook.process(parse_payload(wa_text("emailnya apa?", msg_id="wamid.E1", sender="62877"))[0])
    (asked,) = fake_apis.graph("interactive")
    interactive = asked.params["interactive"]
    assert interactive["type"] == "button" and interactive["body"]["text"] == ASK_BACK_TEXT
    assert [b["reply"] for b in interactive["action"]["buttons"]] == [
        {"id": f"pick:{RINA}", "title": "Dr. Rina Wulandari"}, {"id": f"pick:{BUDI}", "title": "Budi Santoso"}]
    assert fake_apis.graph("text") == []  # the question is the buttons' body; no 👍/👎

    await webhook.process(parse_payload(wa_button_reply(f"pick:{BUDI}", "Budi Santoso", msg_id="wamid.E2"))[0])
    assert answerer.calls[-1][0] == BUDI
    assert "santoso@prodi.test" in fake_apis.graph("text")[-1].params["text"]["body"]
    assert fake_apis.graph("interactive")[-1].params["interactive"]["action"]["buttons"][0]["reply"]["id"] \
        .startswith("fb:up:")


async def test_whatsapp_index_pick_and_a_stale_one(webhook, fake_apis, answerer):
    long = "Ketua Program Studi " + "Teknik Informatika " * 14  # more than the 256-byte id
    answerer.choices = (RINA, long.strip())
    await webhook.process(parse_payload(wa_text("emailnya apa?", msg_id="wamid.F1", sender="62878"))[0])
    buttons = fake_apis.graph("interactive")[-1].params["interactive"]["action"]["buttons"]
    assert buttons[1]["reply"]["id"] == "pick:1" and len(buttons[1]["reply"]["title"]) <= 20
    await webhook.process(parse_payload(wa_button_reply("pick:1", buttons[1]["reply"]["title"], msg_id="wamid.F2",
                                                        sender="62878"))[0])
    assert answerer.calls[-1][0] == long.strip()
    calls = len(answerer.calls)
    await webhook.process(parse_payload(wa_button_reply("pick:1", "Dosen lain", msg_id="wamid.F3",
                                                        sender="62878"))[0])
    await webhook.process(parse_payload(wa_button_reply("pick:0", "Siapa", msg_id="wamid.F4", sender="62879"))[0])
    assert len(answerer.calls) == calls
    assert [c.params["text"]["body"] for c in fake_apis.graph("text")][-2:] == [texts.CHOICE_STALE] * 2


async def test_whatsapp_ask_back_respects_the_24_hour_window(webhook, stores, fake_apis):
    user = UserRef("whatsapp", "62880")
    asking = Reply(ASK_BACK_TEXT, kind="askback", choices=ASK_BACK_CHOICES)
    await stores.state.touch_inbound(user.key, time.time() - 25 * 3600)
    await webhook.send_reply(user, asking)
    assert fake_apis.graph() == []
    await stores.state.touch_inbound(user.key)
    await webhook.send_reply(user, asking)
    assert len(fake_apis.graph("interactive")) == 1


async def test_whatsapp_long_ask_back_text_comes_first_and_the_buttons_after(webhook, stores, fake_apis):
    user = UserRef("whatsapp", "62881")
    await stores.state.touch_inbound(user.key)
    text = "Ada beberapa dosen yang cocok. " * 40  # longer than a button message's 1,024-character body
    await webhook.send_reply(user, Reply(text.strip(), kind="askback", choices=ASK_BACK_CHOICES))
    assert len(fake_apis.graph("text")) == 1
    interactive = fake_apis.graph("interactive")[0].params["interactive"]
    assert interactive["body"]["text"] == texts.CHOICE_PROMPT and len(interactive["action"]["buttons"]) == 2
