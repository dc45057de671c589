"""LOG_LEVEL=DEBUG is for our own code: the libraries (python-telegram-bot, pywa, httpx, httpcore, aiohttp, …) log
whole updates and API calls at DEBUG — user ids, phone numbers, message text — so they stay at INFO or above,
in the log file and on stdout alike (issue 33, item 5). The end-to-end check with the real libraries is
tests/handlers/test_privacy.py."""

from __future__ import annotations

import json
import logging

import pytest

from bot.logging_setup import configure_logging, log_file_path
from bot.settings import Settings
from tests.auxil.logging_state import logging_restored

# what each library logs at DEBUG when a student writes (the shapes of their real lines)
LIBRARY_DEBUG = {
    "telegram.ext.Application": "Processing update Update(message=Message(from_user=User(id=918273645), text='x'))",
    "telegram.Bot": "Calling Bot API endpoint `sendMessage` with parameters `{'chat_id': 918273645}`",
    "telegram.ext.ExtBot": "Calling Bot API endpoint `sendMessage` with parameters `{'chat_id': 918273645}`",
    "telegram.ext": "Webhook received data: {'message': {'from': {'id': 918273645}}}",
    "pywa.helpers": "Resolved recipient 6281299990000 to type RecipientType.WA_ID",
    "pywa.api": "Making POST request to /PNID/messages with kwargs: {'to': '6281299990000'}",
    "httpx": "HTTP Request: POST http://graph/PNID/messages",
    "httpcore.http11": "send_request_headers.started request=<Request [b'POST']>",
    "aiohttp.access": "127.0.0.1 POST /whatsapp/webhook",
    "aiohttp.client": "request to http://graph/",
    "some_new_library.sub": "a library nobody listed yet",
}


@pytest.fixture
def configure(tmp_path, capsys):
    """``configure_logging`` for ``serve`` (file + stdout) at the given level, undone afterwards; returns the
    function that configures and the one that reads back the (file, stdout) records as JSON objects."""
    settings: list[Settings] = []

    def setup(level: str) -> None:
        settings.append(Settings(_env_file=None, data_dir=tmp_path / "data", log_level=level, log_format="json"))
        configure_logging(settings[-1], command="serve")

    def records() -> tuple[list[dict], list[dict]]:
        for handler in logging.getLogger().handlers:
            handler.flush()
        path = log_file_path(settings[-1])
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        return [json.loads(line) for line in lines], [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    with logging_restored():
        yield setup, records


def test_at_debug_the_libraries_debug_lines_are_not_written_and_ours_are(configure):
    setup, records = configure
    setup("DEBUG")
    for name, message in LIBRARY_DEBUG.items():
        logging.getLogger(name).debug(message)
    logging.getLogger("handlers.chat").debug("our own debug line")
    logging.getLogger("generation.pipeline").debug("another of ours")
    logging.getLogger("telegram.ext.Application").info("Application started")
    logging.getLogger("pywa.api").warning("a pywa warning")
    for written in records():
        lines = {(r["logger"], r["msg"]) for r in written}
        assert not {(n, m) for n, m in LIBRARY_DEBUG.items()} & lines, "a library's DEBUG line was written"
        assert ("handlers.chat", "our own debug line") in lines and ("generation.pipeline", "another of ours") in lines
        assert ("telegram.ext.Application", "Application started") in lines and ("pywa.api", "a pywa warning") in lines


def test_the_libraries_are_not_even_asked_to_build_their_debug_records(configure):
    setup, _ = configure
    setup("DEBUG")
    for name in ("telegram", "telegram.ext.Application", "telegram.Bot", "pywa", "pywa.api", "httpx", "httpcore",
                 "aiohttp", "aiohttp.access"):
        assert not logging.getLogger(name).isEnabledFor(logging.DEBUG), name
    assert logging.getLogger("handlers.chat").isEnabledFor(logging.DEBUG)


def test_at_info_nothing_changes_for_the_libraries_info_lines(configure):
    setup, records = configure
    setup("INFO")
    logging.getLogger("telegram.ext.Application").info("Application started")
    logging.getLogger("handlers.chat").debug("not at INFO")
    written, _ = records()
    assert [(r["logger"], r["msg"]) for r in written] == [("telegram.ext.Application", "Application started")]
