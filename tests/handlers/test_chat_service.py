"""ChatService over the stores (in memory, then real Redis) and a real (small) answerer: answers, history, commands,
limits."""

from __future__ import annotations

from handlers import texts
from handlers.chat import UserRef, feedback_ids, parse_feedback_id

ALICE = UserRef("telegram", "42")
ADMIN = UserRef("telegram", "1")


async def test_question_gets_an_answer_with_its_source_and_history_grows(service, answerer, stores):
    reply = await service.handle(ALICE, "Siapa ketua program studi?")
    assert reply.kind == "answer"
    assert "Supriyono" in reply.text
    assert [s.url for s in reply.sources] == ["http://prodi.test/profil/ketua"]
    assert reply.feedback_id == reply.answer.trace_id != ""
    await service.handle(ALICE, "Berapa SKS Basis Data?")
    question, history = answerer.calls[-1]
    assert question == "Berapa SKS Basis Data?"
    assert [m.role for m in history] == ["user", "assistant"]
    assert history[0].text == "Siapa ketua program studi?"
    assert len(await stores.conversations.history(ALICE.key)) == 4


async def test_unanswerable_question_abstains_politely(service):
    reply = await service.handle(ALICE, "Bagaimana cuaca besok pagi?")
    assert reply.kind == "answer" and reply.answer.abstained
    assert reply.text.startswith("Mohon maaf")
    assert reply.sources == ()


async def test_start_help_reset(service, stores):
    assert "Halo" in (await service.handle(ALICE, "/start")).text
    assert "/sumber" in (await service.handle(ALICE, "/help@prodi_test_bot")).text
    await service.handle(ALICE, "Siapa ketua program studi?")
    assert (await service.handle(ALICE, "/reset")).text == texts.RESET_DONE
    assert await stores.conversations.history(ALICE.key) == []


async def test_sumber_lists_the_last_answers_sources(service):
    assert (await service.handle(ALICE, "/sumber")).text == texts.NO_SOURCES
    await service.handle(ALICE, "Berapa SKS mata kuliah Basis Data?")
    reply = await service.handle(ALICE, "/sumber")
    assert "http://prodi.test/kurikulum/basis-data" in reply.text
    assert reply.sources[0].title == "Mata Kuliah Basis Data"


async def test_status_reports_version_last_crawl_and_queue(service):
    text = (await service.handle(ALICE, "/status")).text
    assert "v20260101" in text and "321" in text
    assert "2026-01-01T02:05:00Z" in text
    assert "Antrean pertanyaan: 2" in text


async def test_reindex_is_for_admins_only(service, reindex_calls):
    refused = await service.handle(ALICE, "/reindex")
    assert refused.text == texts.ADMIN_ONLY
    assert reindex_calls == []
    started = await service.handle(ADMIN, "/reindex")
    assert "run r-1" in started.text
    assert reindex_calls == ["telegram:1"]
    wa_admin = await service.handle(UserRef("whatsapp", "628111"), "/reindex")
    assert "run r-1" in wa_admin.text


async def test_feedback_is_stored_with_the_trace_id(service, stores):
    reply = await service.handle(ALICE, "Siapa ketua program studi?")
    thanks = await service.feedback(ALICE, reply.feedback_id, "up")
    assert thanks.text == texts.FEEDBACK_THANKS_UP
    entries = await stores.feedback.entries(ALICE.key)
    assert [(e.trace_id, e.value) for e in entries] == [(reply.feedback_id, "up")]
    # without a trace id the vote goes to the last answer
    await service.feedback(ALICE, "", "down")
    assert [(e.trace_id, e.value) for e in await stores.feedback.entries(ALICE.key)] == [(reply.feedback_id, "down")]
    assert (await service.feedback(ALICE, "x", "meh")).text == texts.FEEDBACK_NOT_FOUND


async def test_hapus_deletes_history_feedback_and_counters(service, stores):
    reply = await service.handle(ALICE, "Siapa ketua program studi?")
    await service.feedback(ALICE, reply.feedback_id, "up")
    for _ in range(2):
        await service.handle(ALICE, "/help")
    assert (await service.handle(ALICE, "/hapus")).text == texts.HAPUS_DONE
    assert await stores.conversations.history(ALICE.key) == []
    assert await stores.feedback.entries(ALICE.key) == []
    assert await stores.feedback.counts() == {"up": 0, "down": 0}
    assert await stores.state.last_answer(ALICE.key) is None
    if stores.client is not None:  # on Redis: no key of the user is left behind
        keys = [k async for k in stores.client.scan_iter(match=f"*{ALICE.key}*")]
        assert keys == []


async def test_rate_limit_gives_a_friendly_message(service, answerer):
    replies = [await service.handle(ALICE, "Siapa ketua program studi?") for _ in range(7)]
    assert [r.kind for r in replies] == ["answer"] * 5 + ["rate_limited"] * 2
    assert "terlalu cepat" in replies[-1].text
    assert len(answerer.calls) == 5
    other = await service.handle(UserRef("telegram", "43"), "Siapa ketua program studi?")
    assert other.kind == "answer"


async def test_answerer_failure_becomes_a_polite_error_and_no_history(service, answerer, stores):
    answerer.fail_next = 1
    reply = await service.handle(ALICE, "Siapa ketua program studi?")
    assert reply.kind == "error" and reply.text == texts.ERROR
    assert await stores.conversations.history(ALICE.key) == []
    assert (await service.handle(ALICE, "Siapa ketua program studi?")).kind == "answer"


async def test_empty_long_and_unknown_inputs(service):
    assert (await service.handle(ALICE, "   ")).text == texts.ASK_SOMETHING
    assert "maksimal" in (await service.handle(ALICE, "x" * 5000)).text
    assert (await service.handle(ALICE, "/entahlah")).text == texts.UNKNOWN_COMMAND


def test_feedback_button_ids_are_built_and_read_in_one_place():
    """Every channel's 👍/👎 ids: built by feedback_ids, read by parse_feedback_id; only up/down are feedback."""
    assert feedback_ids("tr1") == ("fb:up:tr1", "fb:down:tr1")
    assert feedback_ids("") == ("fb:up", "fb:down")
    assert feedback_ids("x" * 60, max_bytes=64) == ("fb:up", "fb:down")  # too long for the channel: last answer
    assert feedback_ids("x" * 56, max_bytes=64) == ("fb:up:" + "x" * 56, "fb:down:" + "x" * 56)
    assert [parse_feedback_id(i) for i in (*feedback_ids("tr1"), *feedback_ids(""))] == [
        ("up", "tr1"), ("down", "tr1"), ("up", ""), ("down", "")]
    assert parse_feedback_id("fb:up:a:b") == ("up", "a:b")
    for other in ("fb:info:tr1", "fb", "fb:", "menu:up:tr1", "", "FB:up:tr1"):
        assert parse_feedback_id(other) is None, other
