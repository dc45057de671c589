"""Answer records and the generator interface."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Answer", "Generation", "Generator", "Reply", "Source", "Trace"]


@dataclass(frozen=True, slots=True)
class Source:
    url: str
    title: str

    def as_json(self) -> dict[str, str]:
        return {"url": self.url, "title": self.title}


@dataclass(frozen=True, slots=True)
class Generation:
    """What a backend returns: text plus the per-token entropies it measured (empty when unavailable)."""

    text: str
    entropies: tuple[float, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = ""


@runtime_checkable
class Generator(Protocol):
    """A text generator (an LLM backend). Blocking; callers run it in the LLM worker pool, never on the event loop.

    Every member below is used: ``name`` in logs and errors, ``prompt_format`` by the pipeline to write its prompts
    (``"chat"``: a list of role/content messages; ``"completion"``: one string), ``should_stop`` by the pool to
    stop a cancelled or timed-out request at its next token, ``close`` when a pool worker ends. A backend
    registers itself with ``generation.backends.register_backend``; one written against the older, smaller
    protocol (``generate(prompt, *, max_tokens, stop)`` only) is completed by ``generation.backends.as_generator``.
    """

    name: str
    prompt_format: str

    def generate(self, prompt: str | Sequence[dict[str, str]], *, max_tokens: int, stop: Sequence[str] = (),
                 should_stop: Callable[[], bool] | None = None) -> Generation:
        """Generate at most ``max_tokens`` tokens for ``prompt``, ending early at any of ``stop`` or when
        ``should_stop()`` (polled once a token) returns True (then ``finish_reason`` is ``"cancelled"``)."""
        ...

    def close(self) -> None:
        """Free the model (the pool calls it once, when the worker that owns this generator ends)."""
        ...


@dataclass(slots=True)
class Trace:
    """Everything a maintainer needs to see why an answer came out as it did."""

    trace_id: str
    query: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    latency_ms: dict[str, float] = field(default_factory=dict)
    stages: list[dict[str, Any]] = field(default_factory=list)  # {"name", "ms", "decision"} in order

    def add(self, step: str, **data: Any) -> None:
        self.steps.append({"step": step, **data})

    def as_json(self) -> dict[str, Any]:
        return {"trace_id": self.trace_id, "query": self.query, "steps": self.steps, "latency_ms": self.latency_ms,
                "stages": self.stages}


@dataclass(frozen=True, slots=True)
class Reply:
    """A settled reply inside the pipeline, before the trace and the latency make it an :class:`Answer`."""

    answer: str
    abstained: bool
    sources: tuple[Source, ...]
    confidence: float
    iterations: int
    stop_reason: str
    highlights: tuple[str, ...] = ()  # see Answer.highlights
    choices: tuple[str, ...] = ()  # see Answer.choices


@dataclass(frozen=True, slots=True)
class Answer:
    answer: str
    abstained: bool
    sources: tuple[Source, ...]
    confidence: float
    iterations: int
    stop_reason: str
    latency_ms: float
    trace: Trace | None = None
    # substrings of ``answer`` to mark (the reader's answer span): bold on Telegram (HTML), *…* on WhatsApp, <strong>
    # on the web page; plain where a channel has no markup
    highlights: tuple[str, ...] = ()
    # asking back: the 2-3 short candidates (names) an ambiguous follow-up may mean; ``answer`` is then the question
    # back and every channel offers the choices as buttons (stop_reason ASK_BACK). Empty: a normal answer
    choices: tuple[str, ...] = ()

    @property
    def trace_id(self) -> str:
        return self.trace.trace_id if self.trace else ""

    def as_json(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "abstained": self.abstained,
            "sources": [s.as_json() for s in self.sources],
            "confidence": round(float(self.confidence), 4),
            "iterations": self.iterations,
            "stop_reason": self.stop_reason,
            "latency_ms": round(float(self.latency_ms), 1),
            "highlights": list(self.highlights),
            "choices": list(self.choices),
            "trace": self.trace.as_json() if self.trace else None,
        }
