"""/langganan and /berhenti (announcement subscriptions, issue 32) through the ChatService, on a real store."""

from __future__ import annotations

import pytest

from handlers import texts
from handlers.chat import COMMANDS, UserRef
from storage.announcements import MAX_TOPICS, AnnouncementStore

TG, TG2, WA, WEB = (UserRef("telegram", "11"), UserRef("telegram", "12"), UserRef("whatsapp", "628123"),
                    UserRef("web", "s-1"))


@pytest.fixture
def subs(service, tmp_path):
    store = AnnouncementStore(tmp_path / "announcements.sqlite3")
    service.subscriptions = store
    service.rate_limit_per_minute = 1000
    yield store
    store.close()


async def test_langganan_subscribes_to_all_then_lists_the_topics(service, subs):
    reply = await service.handle(TG, "/langganan")
    assert reply.text == texts.LANGGANAN_ALL and subs.topics(TG.key) == ["all"]
    listed = await service.handle(TG, "/langganan")
    assert "semua pengumuman" in listed.text and subs.topics(TG.key) == ["all"]
    await service.handle(TG, "/langganan beasiswa")
    listed = await service.handle(TG, "/langganan")
    assert "• semua pengumuman" in listed.text and "• beasiswa" in listed.text


async def test_a_topic_is_normalised_like_a_question(service, subs):
    reply = await service.handle(TG, "/langganan bsw dong")
    assert reply.text == texts.LANGGANAN_TOPIC.format(topic="beasiswa")
    assert subs.topics(TG.key) == ["beasiswa"]
    assert (await service.handle(TG, "/langganan Beasiswa")).text == texts.LANGGANAN_TOPIC.format(topic="beasiswa")
    assert subs.topics(TG.key) == ["beasiswa"]  # the same topic once
    await service.handle(WA, "/langganan KRS")
    assert [(s.user_key, s.channel, s.topic) for s in subs.subscriptions("whatsapp")] == [(WA.key, "whatsapp", "krs")]
    assert (await service.handle(TG, "/langganan dong")).text == texts.LANGGANAN_BAD_TOPIC
    assert subs.topics(TG.key) == ["beasiswa"]


async def test_berhenti_drops_one_topic_or_everything(service, subs):
    assert (await service.handle(TG, "/berhenti")).text == texts.BERHENTI_NONE
    for topic in ("", "beasiswa", "seminar"):
        await service.handle(TG, f"/langganan {topic}".strip())
    assert (await service.handle(TG, "/berhenti bsw")).text == texts.BERHENTI_TOPIC.format(topic="beasiswa")
    assert subs.topics(TG.key) == ["all", "seminar"]
    missing = await service.handle(TG, "/berhenti wisuda")
    assert missing.text == texts.BERHENTI_TOPIC_MISSING.format(topic="wisuda") and missing.kind == "notice"
    assert (await service.handle(TG, "/berhenti")).text == texts.BERHENTI_ALL
    assert subs.topics(TG.key) == []


async def test_hapus_removes_the_subscriptions_too(service, subs):
    await service.handle(TG, "/langganan")
    await service.handle(TG2, "/langganan beasiswa")
    assert (await service.handle(TG, "/hapus")).text == texts.HAPUS_DONE
    assert subs.topics(TG.key) == [] and subs.topics(TG2.key) == ["beasiswa"]
    assert "langganan pengumuman" in texts.HAPUS_DONE


async def test_limits_and_channels_without_push_get_a_polite_reply(service, subs):
    for i in range(MAX_TOPICS):
        await service.handle(TG, f"/langganan topik{i}")
    too_many = await service.handle(TG, "/langganan wisuda")
    assert too_many.text == texts.LANGGANAN_TOO_MANY.format(limit=MAX_TOPICS)
    assert len(subs.topics(TG.key)) == MAX_TOPICS
    assert (await service.handle(TG2, "/langganan " + "panjang " * 20)).text == texts.LANGGANAN_BAD_TOPIC
    assert (await service.handle(WEB, "/langganan")).text == texts.LANGGANAN_NOT_HERE
    assert subs.subscriptions("web") == []


async def test_a_broken_store_loses_nothing_and_says_so(service, subs):
    await service.handle(TG, "/langganan")
    subs.close()  # every call now fails
    reply = await service.handle(TG, "/langganan beasiswa")
    assert reply.text == texts.LANGGANAN_FAILED and reply.kind == "error"
    assert (await service.handle(TG, "/berhenti")).text == texts.LANGGANAN_FAILED
    service.subscriptions = None
    assert (await service.handle(TG, "/langganan")).text == texts.LANGGANAN_FAILED


def test_every_channel_offers_the_commands():
    from handlers.telegram import COMMANDS as TELEGRAM_COMMANDS

    assert {"langganan", "berhenti"} <= set(COMMANDS) and {"langganan", "berhenti"} <= set(TELEGRAM_COMMANDS)
    assert "/langganan" in texts.HELP and "/berhenti" in texts.HELP
