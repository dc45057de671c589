"""Wiring: build each component from Settings, in one place. Commands and the server call these builders.

Lower layers never see Settings; they receive plain values or their own small config objects from here.
"""

from __future__ import annotations

import logging

from bot.settings import Settings  # noqa: F401  (used by the builders below)

logger = logging.getLogger(__name__)

__all__: list[str] = []

# --- storage / ingestion (sync_jobs, storage.docstore) -------------------------------------------------------

# --- retrieval (index manager, embedder, facts) --------------------------------------------------------------

# --- generation (LLM backend, worker pool, answer pipeline) --------------------------------------------------

# --- handlers (conversation store, chat service, channels) ---------------------------------------------------

# --- operations (reindex job, locks, runs, scheduler, metrics) ------------------------------------------------
