"""Answer records and the generator interface."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Answer", "Generation", "Generator", "Source", "Trace"]


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
    """A text generator. Blocking; callers run it in the LLM worker pool, never on the event loop."""

    def generate(self, prompt: str | Sequence[dict[str, str]], *, max_tokens: int, stop: Sequence[str] = ()) -> Generation: ...


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
