"""WhatsApp Cloud API: the webhook on the shared server (GET verification, POST deliveries). What a delivery does is
``handlers/whatsapp.py``'s business (``WhatsAppWebhook``, built by ``bot.wiring.build_whatsapp``)."""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web

from bot import wiring
from bot.channels.base import Channel
from bot.settings import Settings

__all__ = ["WhatsAppChannel"]

logger = logging.getLogger(__name__)

_NEEDED = ("WHATSAPP_PHONE_NUMBER_ID", "WHATSAPP_APP_SECRET", "WHATSAPP_VERIFY_TOKEN")


class WhatsAppChannel(Channel):
    name = "whatsapp"
    routes = (("GET", "/whatsapp/webhook", "verify"), ("POST", "/whatsapp/webhook", "deliver"))

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        c = context
        self.webhook = wiring.build_whatsapp(c.settings, c.service, c.stores, metrics=c.metrics)

    @classmethod
    def why_not(cls, settings: Settings) -> str | None:
        s = settings.channels
        if s.whatsapp_token is None:
            return "WHATSAPP_TOKEN is not set"
        values = (s.whatsapp_phone_number_id, s.whatsapp_app_secret, s.whatsapp_verify_token)
        missing = [name for name, value in zip(_NEEDED, values, strict=True) if not value]
        if missing:
            return f"set {', '.join(missing)} as well (see .env.example)"
        return None

    async def verify(self, request: web.Request) -> web.Response:
        status, body = self.webhook.verify(request.query)
        return web.Response(status=status, text=body)

    async def deliver(self, request: web.Request) -> web.Response:
        body = await request.read()
        status, text = self.webhook.accept(body, request.headers.get("X-Hub-Signature-256"))
        return web.Response(status=status, text=text)

    async def stop(self) -> None:
        """Finish the deliveries being answered (up to 30 s), then close the Graph client."""
        await self.webhook.close()
