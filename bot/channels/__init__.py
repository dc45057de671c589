"""The channels ``serve`` runs: one module each, built from the list below.

Add a channel (LINE, Discord, …): write ``bot/channels/<name>.py`` with a ``Channel`` subclass (``bot/channels/
base.py``: ``name``, ``why_not(settings)``, ``routes``, ``start``, ``stop``) and add it to ``CHANNELS``. Nothing else
changes: ``serve`` starts the configured ones, mounts their routes on the shared HTTP server and stops them in
reverse order. The console chat (``python -m bot chat``) is ``console.ConsoleChannel``, run by its own command.
"""

from __future__ import annotations

from bot.channels.base import Channel, ChannelContext
from bot.channels.telegram import TelegramChannel
from bot.channels.web import WebChannel
from bot.channels.whatsapp import WhatsAppChannel

__all__ = ["CHANNELS", "Channel", "ChannelContext"]

CHANNELS: list[type[Channel]] = [WebChannel, TelegramChannel, WhatsAppChannel]
