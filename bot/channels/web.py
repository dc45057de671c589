"""The web chat page (``/``) and its JSON API (``/api/chat``, ``/api/retrieve``, ``/api/feedback``); what a request
does is ``handlers/web.py``'s business. Always on: it needs no token. Every API request passes the client address's
limits first (``WEB_RATE_LIMIT_PER_MINUTE``, ``WEB_MAX_IN_FLIGHT_PER_CLIENT``; the address is the peer, or what a
``TRUSTED_PROXIES`` proxy says in ``X-Forwarded-For``)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot.channels.base import Channel
from bot.server import PAGE_HEADERS, WEB_DIR, client_address, json_error, proxy_networks, read_json
from handlers.web import ClientLimits, WebApi, WebApiError

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
        channels = context.settings.channels
        self.trusted = proxy_networks(channels.trusted_proxies)
        self.limits = ClientLimits(context.stores.state, per_minute=channels.web_rate_limit_per_minute,
                                   max_in_flight=channels.web_max_in_flight_per_client)

    async def _call(self, method: Callable[[Any], Awaitable[Any]], request: web.Request) -> web.Response:
        """The JSON body to ``method`` of :class:`WebApi` within the client's limits; a refusal as a JSON error (with
        the student's sentence in ``reply`` and ``Retry-After`` when it has them)."""
        try:
            async with self.limits.admit(client_address(request, self.trusted)):
                return _json(await method(await read_json(request)))
        except WebApiError as error:
            if not (error.reply or error.retry_after):
                return json_error(error.status, error.message)
            body = {"error": error.message, "reply": error.reply,
                    "kind": "rate_limited" if error.status == 429 else "notice"}
            response = web.json_response(body, status=error.status, dumps=lambda d: json.dumps(d, ensure_ascii=False))
            if error.retry_after:
                response.headers["Retry-After"] = str(error.retry_after)
            return response

    async def chat(self, request: web.Request) -> web.Response:
        return await self._call(self.api.chat, request)

    async def retrieve(self, request: web.Request) -> web.Response:
        return await self._call(self.api.retrieve, request)

    async def feedback(self, request: web.Request) -> web.Response:
        return await self._call(self.api.feedback, request)

    async def page(self, request: web.Request) -> web.FileResponse:
        return web.FileResponse(WEB_DIR / "index.html", headers=PAGE_HEADERS)
