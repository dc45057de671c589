"""A scripted ``Generator`` for tests: queue the texts (or whole Generations) it should return, read its prompts.

Used by the generation tests (to force degenerate or injected outputs through the real pipeline) and by the
channel tests (to get deterministic replies without loading a model).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence

from generation.types import Generation

__all__ = ["FakeGenerator"]


class FakeGenerator:
    """Implements the ``Generator`` protocol. Returns enqueued outputs in order, then ``default``.

    ``history`` holds every prompt it received (a string, or the list of chat messages), in call order;
    ``calls`` holds ``(prompt, max_tokens, stop)`` triples. Thread-safe: the LLM pool calls it from a worker thread.
    """

    def __init__(self, default: str | Generation | None = "", *, entropy: float = 0.1) -> None:
        self._queue: deque[Generation] = deque()
        self._lock = threading.Lock()
        self._entropy = entropy
        self.default = default
        self.history: list[str | Sequence[dict[str, str]]] = []
        self.calls: list[tuple[str | Sequence[dict[str, str]], int, tuple[str, ...]]] = []

    def _as_generation(self, item: str | Generation) -> Generation:
        if isinstance(item, Generation):
            return item
        n = max(1, len(item.split()))
        return Generation(
            text=item,
            entropies=tuple([self._entropy] * n),
            prompt_tokens=0,
            completion_tokens=n,
            finish_reason="stop",
        )

    def enqueue(self, *items: str | Generation) -> FakeGenerator:
        """Queue one or more outputs (plain text or a full ``Generation``); returns self for chaining."""
        with self._lock:
            for item in items:
                self._queue.append(self._as_generation(item))
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def generate(
        self, prompt: str | Sequence[dict[str, str]], *, max_tokens: int, stop: Sequence[str] = ()
    ) -> Generation:
        with self._lock:
            self.history.append(prompt)
            self.calls.append((prompt, max_tokens, tuple(stop)))
            if self._queue:
                return self._queue.popleft()
            if self.default is None:
                raise AssertionError("FakeGenerator: no output enqueued for this call (and default=None)")
            return self._as_generation(self.default)
