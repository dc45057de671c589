"""Handlers: the channel-neutral ChatService and thin per-channel adapters (telegram, whatsapp, web)."""

__all__: list[str] = []
