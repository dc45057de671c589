"""Asking back, the channel side: an ``Answer`` with ``choices`` becomes a ``Reply`` of kind ``askback`` (no 👍/👎,
not in the question log, both turns in the history), every channel shows the choices as buttons, and a press is the
student typing the choice. Over the real ChatService and Redis stores, the loopback Bot API and Graph API stand-ins,
and ``AskBackAnswerer`` (tests/auxil/answerer.py), which asks back on "emailnya apa?" and records what it is asked."""

from __future__ import annotations

import pytest

from bot import wiring
from bot.channels.base import ChannelContext
from bot.channels.console import CONSOLE_RATE_LIMIT, ConsoleChannel
from bot.settings import Settings
from generation.types import Answer
from handlers.chat import ChatService, Reply, UserRef
from handlers.choices import parse_pick_id, pick_ids, short_titles
from handlers.web import WebApi
from tests.auxil.answerer import ASK_BACK_CHOICES, ASK_BACK_TEXT, AskBackAnswerer

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


async def test_last_choices_expire_and_hapus_forgets_them(stores):
    await stores.state.set_last_choices("web:s1", (RINA, BUDI), ttl_seconds=60)
    assert await stores.state.last_choices("web:s1") == (RINA, BUDI)
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
