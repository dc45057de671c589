"""A channel is one class and one entry in ``bot.channels.CHANNELS``: a toy channel written here is started by
``serve``, answers on its own route over real HTTP through the shared ChatService, and is stopped again."""

from __future__ import annotations

import aiohttp
import pytest
from aiohttp import web

from bot import channels
from bot.app import ServeApp
from bot.channels.base import Channel
from bot.settings import Settings
from handlers import texts
from handlers.chat import UserRef
from tests.auxil.answerer import CorpusAnswerer


class EchoChannel(Channel):
    """A toy platform: POST /echo with the text, the reply comes back as JSON."""

    name = "echo"
    routes = (("POST", "/echo", "receive"),)
    events: list[str] = []

    async def start(self) -> None:
        self.events.append("start")

    async def stop(self) -> None:
        self.events.append("stop")

    async def receive(self, request: web.Request) -> web.Response:
        reply = await self.context.service.handle(UserRef("echo", "42"), await request.text())
        return web.json_response({"reply": reply.text, "kind": reply.kind})


class SilentChannel(EchoChannel):
    name = "silent"
    routes = (("POST", "/silent", "receive"),)

    @classmethod
    def why_not(cls, settings: Settings) -> str | None:
        return "SILENT_TOKEN is not set"


@pytest.fixture
def served_with(monkeypatch, data_dir):
    async def serve(*extra: type[Channel]) -> ServeApp:
        monkeypatch.setattr(channels, "CHANNELS", [*channels.CHANNELS, *extra])  # the one registration line
        app = ServeApp(Settings(_env_file=None, data_dir=data_dir, http_port=0), answerer=CorpusAnswerer(),
                       status_provider=dict, reindex_trigger=lambda who: None, index_ready=lambda: True,
                       start_scheduler=False)
        await app.start()
        return app

    return serve


async def test_a_channel_registered_with_one_list_entry_answers_on_its_route(served_with) -> None:
    EchoChannel.events = []
    app = await served_with(EchoChannel)
    try:
        assert app.channel("echo") is not None and EchoChannel.events == ["start"]
        async with aiohttp.ClientSession(base_url=f"http://127.0.0.1:{app.port}") as session:
            async with session.post("/echo", data="/help") as response:
                assert response.status == 200
                assert (await response.json()) == {"reply": texts.HELP, "kind": "command"}
            async with session.post("/echo", data="Apa saja laboratorium yang tersedia?") as response:
                body = await response.json()
                assert body["kind"] == "answer" and "laboratorium" in body["reply"].lower()
            async with session.post("/api/chat", json={"message": "/help"}) as response:  # the others still run
                assert response.status == 200
    finally:
        await app.stop()
    assert EchoChannel.events == ["start", "stop"]


async def test_a_channel_that_is_not_configured_says_why_on_its_route(served_with) -> None:
    app = await served_with(SilentChannel)
    try:
        assert app.channel("silent") is None
        async with aiohttp.ClientSession() as session:
            async with session.post(f"http://127.0.0.1:{app.port}/silent", data="halo") as response:
                assert response.status == 404
                assert "SILENT_TOKEN is not set" in (await response.json())["error"]
    finally:
        await app.stop()
