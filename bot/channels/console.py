"""The console chat (``python -m bot chat``, what ``make run`` starts): one local user on stdin/stdout, over the same
``ChatService`` as every other channel, with the conversation kept in this process's memory. It is not one of
``serve``'s channels: ``bot.cmd_answer.cmd_chat`` runs it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from bot.channels.base import Channel
from handlers import texts
from handlers.chat import Reply, UserRef
from handlers.progress import answer_with_progress

__all__ = ["WELCOME", "ConsoleChannel"]

WELCOME = (
    "Selamat datang di asisten program studi.\n"
    "Ketik pertanyaan tentang program studi, lalu tekan Enter.\n"
    "Perintah: /sumber (sumber jawaban terakhir), /reset (mulai percakapan baru), /keluar (selesai)."
)
FAREWELL = "Sampai jumpa!"
EXIT_WORDS = ("/keluar", "/exit", "/quit")
# one person at their own keyboard: no per-minute limit worth having
CONSOLE_RATE_LIMIT = 1_000_000


class ConsoleChannel(Channel):
    name = "console"

    def __init__(self, context: Any, *, read_line: Callable[[str], str] = input,
                 write: Callable[[str], Any] = print) -> None:
        super().__init__(context)
        self.read_line = read_line
        self.write = write
        self.user = UserRef("console", "local")
        self.choices: tuple[str, ...] = ()  # the last reply's ask-back choices: typing a number picks one

    async def run(self) -> int:
        """Read questions until /keluar or the end of input; print each reply."""
        self.write(WELCOME)
        loop = asyncio.get_running_loop()
        while True:
            try:
                line = await loop.run_in_executor(None, self.read_line, "\nAnda> ")
            except EOFError:
                self.write("\n" + FAREWELL)
                return 0
            text = line.strip()
            if not text:
                continue
            if text in EXIT_WORDS:
                self.write(FAREWELL)
                return 0
            if text.isdigit() and 1 <= int(text) <= len(self.choices):
                text = self.choices[int(text) - 1]

            async def notice(message: str) -> None:
                self.write(message)

            self.show(await answer_with_progress(self.context.service, self.user, text, notice=notice))

    def show(self, reply: Reply) -> None:
        self.choices = reply.choices
        if reply.kind not in ("answer", "askback"):
            self.write(reply.text)
            return
        self.write("\nBot> " + reply.text)
        for i, choice in enumerate(reply.choices, 1):
            self.write(f"  {i}. {choice}")
        if reply.choices:
            self.write(texts.CHOICE_HINT)
        if reply.sources:
            self.write("\nSumber:")
            for i, source in enumerate(reply.sources, 1):
                self.write(f"  [{i}] {source.title} — {source.url}")
