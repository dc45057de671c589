"""Storage: conversation store, document and crawl-state store (SQLite), index artifacts, job runs, feedback."""

from storage.models import Chunk, Document, Message

__all__ = ["Chunk", "Document", "Message"]
