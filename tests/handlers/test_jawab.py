"""/jawab (admin answers from Telegram) through the ChatService and the offline Telegram adapter."""

from __future__ import annotations

from handlers import texts
from handlers.chat import UserRef

ADMIN, STUDENT = UserRef("telegram", "1"), UserRef("telegram", "5")


async def test_jawab_is_for_admins_and_needs_question_and_answer(service):
    saved: list[tuple[str, str, str]] = []

    def write(question: str, answer: str, who: str) -> int:
        if "kemarin" in answer:
            raise ValueError("the answer names no date")
        saved.append((question, answer, who))
        return len(saved)

    service.admin_answer = write
    assert (await service.handle(STUDENT, "/jawab Kapan wisuda? | 12 Oktober")).text == texts.ADMIN_ONLY
    assert (await service.handle(ADMIN, "/jawab Kapan wisuda?")).text == texts.JAWAB_USAGE
    assert (await service.handle(ADMIN, "/jawab | 12 Oktober")).text == texts.JAWAB_USAGE
    reply = await service.handle(ADMIN, "/jawab Kapan wisuda? | Wisuda pada 12 Oktober 2026.")
    assert "#1" in reply.text and "Kapan wisuda?" in reply.text
    assert saved == [("Kapan wisuda?", "Wisuda pada 12 Oktober 2026.", "telegram:1")]
    failed = await service.handle(ADMIN, "/jawab Kapan? | kemarin")
    assert "tidak dapat disimpan" in failed.text and "no date" in failed.text
    service.admin_answer = None
    assert "belum dikonfigurasi" in (await service.handle(ADMIN, "/jawab a | b")).text


def test_telegram_registers_jawab():
    from handlers.telegram import COMMANDS

    assert "jawab" in COMMANDS
