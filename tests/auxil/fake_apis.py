"""A loopback stand-in for the Telegram Bot API and the WhatsApp Graph API that records every call.

Bot API: ``POST /bot<token>/<method>`` (form, multipart or JSON), with plausible results for getMe, sendMessage,
sendChatAction, answerCallbackQuery, editMessageReplyMarkup, setWebhook, deleteWebhook, getUpdates (served from
``telegram_updates``), and ``True`` for anything else. Graph API: ``POST /<version>/<phone_id>/messages`` returns a
message id; ``graph_failures`` makes the next N calls fail with the given statuses (to exercise retries).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.auxil.loopback import LoopbackApp

__all__ = ["BOT_USER", "Call", "FakeApis"]

BOT_USER = {
    "id": 777000111,
    "is_bot": True,
    "first_name": "Prodi Bot",
    "username": "prodi_test_bot",
    "can_join_groups": True,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
}


@dataclass
class Call:
    api: str  # "telegram" or "graph"
    method: str
    params: dict[str, Any]
    path: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    status: int = 200  # what the stand-in answered (graph_failures make it 4xx/5xx)


def _maybe_json(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


class FakeApis:
    """Start with ``await apis.start()``; ``telegram_base`` and ``graph_base`` are the URLs to configure."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.telegram_updates: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.graph_failures: list[int] = []
        self._ids = itertools.count(1000)
        self._http = LoopbackApp()
        self.port = 0
        self._changed = asyncio.Event()

    @property
    def telegram_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def graph_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v26.0"

    async def start(self) -> FakeApis:
        app = web.Application()
        app.router.add_post("/bot{token}/{method}", self._telegram)
        app.router.add_post("/v26.0/{phone}/messages", self._graph)
        self.port = await self._http.serve(app)
        return self

    async def close(self) -> None:
        await self._http.close()

    # --- queries used by tests -----------------------------------------------------------------------------
    def telegram(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.api == "telegram" and c.method == method]

    def graph(self, kind: str | None = None) -> list[Call]:
        out = [c for c in self.calls if c.api == "graph"]
        if kind == "read":
            return [c for c in out if c.params.get("status") == "read"]
        if kind is not None:
            return [c for c in out if c.params.get("type") == kind]
        return out

    async def wait_for(self, predicate, within: float = 15.0) -> None:
        """Wait until ``predicate()`` is true (re-checked after every recorded call)."""
        deadline = time.monotonic() + within
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting; calls so far: {[(c.api, c.method) for c in self.calls]}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), timeout=min(remaining, 0.5))
            except TimeoutError:
                pass

    # --- handlers --------------------------------------------------------------------------------------------
    async def _params(self, request: web.Request) -> dict[str, Any]:
        if request.content_type == "application/json":
            data = await request.json()
            return data if isinstance(data, dict) else {}
        form = await request.post()
        return {k: _maybe_json(v) if isinstance(v, str) else v for k, v in form.items()}

    def _record(self, call: Call) -> None:
        self.calls.append(call)
        self._changed.set()

    def _message(self, params: dict[str, Any], text: str | None = None) -> dict[str, Any]:
        chat_id = params.get("chat_id", 0)
        return {
            "message_id": next(self._ids),
            "date": int(time.time()),
            "chat": {"id": int(chat_id) if str(chat_id).lstrip("-").isdigit() else 0, "type": "private"},
            "from": BOT_USER,
            "text": text if text is not None else str(params.get("text", "")),
        }

    async def _telegram(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params = await self._params(request)
        if method.lower() == "getupdates":
            try:
                update = await asyncio.wait_for(self.telegram_updates.get(), timeout=0.5)
                result: Any = [update]
            except TimeoutError:
                result = []
            return web.json_response({"ok": True, "result": result})
        self._record(Call("telegram", method, params, request.path))
        results: dict[str, Any] = {
            "getme": BOT_USER,
            "sendmessage": self._message(params),
            "editmessagereplymarkup": self._message(params, ""),
            "getwebhookinfo": {"url": "", "has_custom_certificate": False, "pending_update_count": 0},
        }
        return web.json_response({"ok": True, "result": results.get(method.lower(), True)})

    async def _graph(self, request: web.Request) -> web.Response:
        params = await self._params(request)
        status = self.graph_failures.pop(0) if self.graph_failures else 200
        self._record(Call("graph", "messages", params, request.path, dict(request.headers), status))
        if status != 200:
            return web.json_response({"error": {"message": "simulated", "code": status}}, status=status)
        if params.get("status") == "read":
            return web.json_response({"success": True})
        return web.json_response(
            {
                "messaging_product": "whatsapp",
                "contacts": [{"input": params.get("to"), "wa_id": params.get("to")}],
                "messages": [{"id": f"wamid.fake{next(self._ids)}"}],
            }
        )
