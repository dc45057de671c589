"""Handlers: the channel-neutral ChatService and thin per-channel adapters (telegram, whatsapp, web)."""

from handlers.chat import Answerer, ChatService, Reply, UserRef

__all__ = ["Answerer", "ChatService", "Reply", "UserRef"]
