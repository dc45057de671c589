"""The web chat page (``/``) and its JSON API (``/api/chat``, ``/api/retrieve``, ``/api/feedback``); what a request
does is ``handlers/web.py``'s business. Always on: it needs no token."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot.channels.base import Channel
from bot.server import PAGE_HEADERS, WEB_DIR, json_error, read_json
from handlers.web import WebApi, WebApiError

__all__ = ["WebChannel"]


def _json(data: Any) -> web.Response:
    return web.json_response(data, dumps=lambda d: json.dumps(d, ensure_ascii=False))


class WebChannel(Channel):
    name = "web"
    routes = (("POST", "/api/chat", "chat"), ("POST", "/api/retrieve", "retrieve"),
              ("POST", "/api/feedback", "feedback"), ("GET", "/", "page"))

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self.api = WebApi(context.service, context.search, metrics=context.metrics)

    async def _call(self, method: Callable[[Any], Awaitable[Any]], request: web.Request) -> web.Response:
        """The JSON body to ``method`` of :class:`WebApi`; its error as a JSON error response."""
        try:
            return _json(await method(await read_json(request)))
        except WebApiError as error:
            return json_error(error.status, error.message)

    async def chat(self, request: web.Request) -> web.Response:
        return await self._call(self.api.chat, request)

    async def retrieve(self, request: web.Request) -> web.Response:
        return await self._call(self.api.retrieve, request)

    async def feedback(self, request: web.Request) -> web.Response:
        return await self._call(self.api.feedback, request)

    async def page(self, request: web.Request) -> web.FileResponse:
        return web.FileResponse(WEB_DIR / "index.html", headers=PAGE_HEADERS)
