"""The channels' base error (issue 30's error tree: ``storage.errors.ProdiBotError`` is the root)."""

from __future__ import annotations

from storage.errors import ProdiBotError

__all__ = ["ChannelError"]


class ChannelError(ProdiBotError):
    """A channel (web API, WhatsApp, Telegram) refused a request or could not deliver a reply."""
