"""The parts of ChatService that live in modules of their own (handlers.smalltalk_filter, subscribing, status,
announcing, replies): the service still answers through them, and their log lines keep the service's logger name."""

from __future__ import annotations

import logging

import handlers.chat
import handlers.replies
from generation.smalltalk import SmallTalk
from handlers import texts
from handlers.announcing import announcement_action
from handlers.chat import UserRef
from handlers.smalltalk_filter import names_a_choice, without_smalltalk_lead
from handlers.status import format_status
from handlers.subscribing import subscribe, unsubscribe

TG = UserRef("telegram", "11")


class BrokenClassifier:
    def classify(self, text: str) -> SmallTalk:
        raise RuntimeError("no model")


class BrokenSubscriptions:
    def subscribe(self, user_key: str, channel: str, topic: str) -> bool:
        raise RuntimeError("database is locked")

    def unsubscribe(self, user_key: str, topic: str | None = None) -> int:
        raise RuntimeError("database is locked")

    def topics(self, user_key: str) -> list[str]:
        return []

    def forget_user(self, user_key: str) -> int:
        return 0


class BrokenDesk:
    async def send(self, announcement_id, *, accepted=None):
        raise RuntimeError("channel down")

    async def get(self, announcement_id):
        raise RuntimeError("store down")


def test_the_reply_types_are_re_exported_by_handlers_chat():
    assert handlers.chat.Reply is handlers.replies.Reply and handlers.chat.UserRef is handlers.replies.UserRef


def test_the_status_text_is_the_same_through_the_service(service):
    data = {"index": {"version": "v1", "chunks": 3}, "runs": []}
    assert service.format_status(data) == format_status(data, lambda: 2)
    assert service.format_status(data).splitlines() == [
        "Status layanan:", "• Versi indeks: v1 (3 potongan teks)", "• Situs terakhir diperbarui: belum pernah",
        "• Antrean pertanyaan: 2"]
    assert format_status({}).endswith("• Antrean pertanyaan: 0")


def test_a_choice_is_named_by_a_word_of_it():
    assert names_a_choice("pak santoso", ["Dr. Budi Santoso, M.T."])
    assert not names_a_choice("halo", ["Dr. Budi Santoso, M.T."])


def test_a_failing_classifier_leaves_the_message_whole_and_logs_as_the_service(caplog):
    with caplog.at_level(logging.ERROR):
        assert without_smalltalk_lead(BrokenClassifier(), "pagi kak, pkl kapan?") == "pagi kak, pkl kapan?"
    assert without_smalltalk_lead(None, "pagi kak, pkl kapan?") == "pagi kak, pkl kapan?"
    assert [r.name for r in caplog.records] == ["handlers.chat"]


async def test_a_failing_subscription_store_gets_a_reply_and_logs_as_the_service(caplog):
    with caplog.at_level(logging.ERROR):
        added = await subscribe(BrokenSubscriptions(), TG, "beasiswa")
        removed = await unsubscribe(BrokenSubscriptions(), TG, "")
    assert (added.text, added.kind) == (texts.LANGGANAN_FAILED, "error")
    assert (removed.text, removed.kind) == (texts.LANGGANAN_FAILED, "error")
    assert [r.name for r in caplog.records] == ["handlers.chat", "handlers.chat"]
    assert (await subscribe(None, UserRef("web", "s-1"))).text == texts.LANGGANAN_NOT_HERE


async def test_a_failing_desk_gets_a_notice_and_logs_as_the_service(caplog):
    with caplog.at_level(logging.ERROR):
        reply = await announcement_action(BrokenDesk(), "send", 7)
    assert (reply.text, reply.kind) == (texts.ANNOUNCE_FAILED, "notice")
    assert [r.name for r in caplog.records] == ["handlers.chat"]
    assert (await announcement_action(None, "send", 7)).kind == "notice"


async def test_the_service_checks_the_admin_before_the_desk(service):
    service.announcements = BrokenDesk()
    reply = await service.announcement_action(UserRef("telegram", "99"), "send", 7)
    assert (reply.text, reply.kind) == (texts.ADMIN_ONLY, "notice")
