"""The console chat is a channel over ChatService and the in-memory stores: /sumber, /reset and the history
window are ChatService's, not a copy of them."""

from __future__ import annotations

from bot import wiring
from bot.channels.base import ChannelContext
from bot.channels.console import CONSOLE_RATE_LIMIT, ConsoleChannel
from bot.settings import Settings
from handlers import texts
from tests.auxil.answerer import CorpusAnswerer


async def test_console_questions_sources_reset_and_exit(data_dir) -> None:
    settings = Settings(_env_file=None, data_dir=data_dir, redis_url="redis://127.0.0.1:1/0")  # never used
    stores = wiring.build_channel_stores(settings, in_memory=True)
    assert stores.client is None
    service = wiring.build_chat_service(settings, CorpusAnswerer(), stores, rate_limit_per_minute=CONSOLE_RATE_LIMIT)
    typed = iter(["/sumber", "Apa saja laboratorium yang tersedia?", "", "/sumber", "/reset", "/keluar"])
    out: list[str] = []
    console = ConsoleChannel(ChannelContext(settings=settings, service=service, stores=stores),
                             read_line=lambda prompt: next(typed), write=out.append)
    assert await console.run() == 0
    assert out[1] == texts.NO_SOURCES
    answer = out.index("\nSumber:")
    assert out[2].startswith("\nBot> ") and out[answer + 1].startswith("  [1] ")
    assert any(texts.SOURCES_HEADER in line for line in out[answer + 2:])  # the second /sumber
    assert texts.RESET_DONE in out and out[-1] == "Sampai jumpa!"
    assert await stores.conversations.history("console:local") == []  # /reset went through ChatService


async def test_console_says_goodbye_at_the_end_of_input(data_dir) -> None:
    settings = Settings(_env_file=None, data_dir=data_dir)
    stores = wiring.build_channel_stores(settings, in_memory=True)
    service = wiring.build_chat_service(settings, CorpusAnswerer(), stores)

    def eof(prompt: str) -> str:
        raise EOFError

    out: list[str] = []
    console = ConsoleChannel(ChannelContext(settings=settings, service=service, stores=stores), read_line=eof,
                             write=out.append)
    assert await console.run() == 0 and out[-1] == "\nSampai jumpa!"
