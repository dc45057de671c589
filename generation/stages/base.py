"""What the answer pipeline's stages share: the turn they read and fill, the typed outcomes they return, the
services they call (retrieval, embeddings, the LLM pool, the reader), and the stage contract.

A stage is a small class with a ``name`` (its name in the trace) and ``async run(turn) -> str | Abstain``: it reads
what earlier stages put in the :class:`Turn`, fills its own part, and returns its decision (a short string the
trace records) or :class:`Abstain`, which the pipeline turns into the refusal once (``AnswerPipeline._run_stages``).
A stage that settles the reply sets ``turn.result`` to a :class:`~generation.types.Reply`. Stages import nothing
from ``generation.pipeline``; the pipeline imports them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from generation.calibration import Calibrator
from generation.config import LLM_ERRORS, PipelineConfig
from generation.pool import LLMPool
from generation.support import EvidenceSentence
from generation.types import Generation, Reply, Trace
from retrieval.types import Embedder, Hit, SearchResult

if TYPE_CHECKING:
    from generation.reader import Reader, Span
    from retrieval.search import SearchIndex

__all__ = ["Abstain", "Evidence", "Stage", "StageContext", "Turn", "hits_json"]

T = TypeVar("T")
# the pipeline's logger: its stages log under the name operators already filter on
logger = logging.getLogger("generation.pipeline")


@dataclass(frozen=True, slots=True)
class Abstain:
    """A stage's typed "refuse": the pipeline writes the refusal (its text, the trace's final step) once."""

    reason: str  # a StopReason.ABSTAIN_* value


@dataclass
class Evidence:
    """The evidence sentences of the hits, each one's score and score components (the rules answerer)."""

    hits: list[Hit] = field(default_factory=list)
    sentences: list[EvidenceSentence] = field(default_factory=list)
    vectors: np.ndarray | None = None
    scores: list[float] = field(default_factory=list)
    components: list[tuple[float, ...]] = field(default_factory=list)  # per sentence, in EVIDENCE_COMPONENTS order
    citable: list[bool] = field(default_factory=list)  # False: a heading or a question on the page, never cited
    coverage_chunk: dict[str, float] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    hit_stems: dict[str, set[str]] = field(default_factory=dict)
    # per chunk, the question's numbers it does not name but states a bound for ("di bawah 3,00" for "IP 2,9")
    bounded: dict[str, set[str]] = field(default_factory=dict)


@dataclass
class Turn:
    """What one question carries through the stages (each stage reads and fills its part)."""

    question: str
    history: list[Any]  # storage.models.Message or anything with .role and .text
    trace: Trace
    on_position: Callable[[int], Awaitable[None]] | None = None
    result: Reply | None = None  # set by the stage that settles the reply
    # rewrite
    clean: str = ""
    normalized: str = ""
    followup: bool = False
    query: str = ""
    anchor_text: str = ""
    index: SearchIndex | None = None
    # retrieve
    confidence: float = 0.0
    hits: list[Hit] = field(default_factory=list)
    contact: str | None = None
    related: list[str] = field(default_factory=list)
    # evidence
    anchor_stems: list[str] = field(default_factory=list)
    list_q: bool = False  # a list question (set by the rewrite stage: a follow-up takes its resolved question's form)
    kind: str | None = None
    unit: str | None = None  # the unit a "berapa" question counts in ("berapa jam")
    exclude: tuple[str, ...] = ()  # what the previous reply named, for "ada lagi yang …?" (FollowUp.exclude)
    corpus_w: dict[str, float] | None = None
    q_vec: np.ndarray | None = None
    ev: Evidence = field(default_factory=Evidence)
    best_cov: float = 0.0
    top_sim: float = 0.0
    # generate
    gen: Generation | None = None
    span: str | None = None
    conf_dragin: float = 0.0
    iterations: int = 0
    # compose and gate
    chosen: list[EvidenceSentence] = field(default_factory=list)
    cov_chunk: float = 0.0
    cov_sentence: float = 0.0
    missing: list[str] = field(default_factory=list)
    max_missing: float = 0.0
    numbers_ok: bool = True
    negated: bool = False
    negation_ok: bool = True
    type_ok: bool = True
    p_correct: float | None = None
    # read (the learned reader): the chosen hit and its span
    read_hit: Hit | None = None
    read_passage: str = ""
    read_span: Span | None = None
    read_rows: list[str] | None = None  # a list question's table column, row by row, when the span is in one


class Stage(Protocol):
    """One step of the answer pipeline (see the module docstring)."""

    name: str

    async def run(self, turn: Turn) -> str | Abstain: ...


class StageContext:
    """The services every stage may call, owned by one ``AnswerPipeline``: blocking work in the executor, query and
    passage embeddings (cached), retrieval, the LLM pool and its prompt format, the learned reader (loaded on first
    use), the abstention model and the evidence weights."""

    def __init__(self, retriever: Callable[[], SearchIndex | None], pool: LLMPool, config: PipelineConfig,
                 embedder: Embedder, calibrator: Calibrator | None, reader: Reader | None,
                 evidence_weights: dict[str, float]) -> None:
        self.retriever = retriever
        self.pool = pool
        self.config = config
        self.embedder = embedder
        self.calibrator = calibrator
        self.evidence_weights = evidence_weights
        self._reader = reader
        self._reader_lock = threading.Lock()
        self._vec_cache: dict[tuple[str, str], np.ndarray] = {}
        self._contact: dict[int, str | None] = {}
        self._prompt_format: str | None = None

    @property
    def abstention_mode(self) -> str:
        """The gate in force: "calibrated" needs a model; without one the hand thresholds decide."""
        mode = self.config.abstention
        return "thresholds" if mode == "calibrated" and self.calibrator is None else mode

    @property
    def reader(self) -> Reader:
        """The learned reader (loaded once, on first use: it dequantises the base model's lower layers)."""
        if self._reader is None:
            with self._reader_lock:
                if self._reader is None:
                    from generation.reader import Reader

                    self._reader = Reader(self.config.reader_model_dir)
        return self._reader

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(None, partial(func, *args))

    def _embed_blocking(self, texts: Sequence[str], kind: str) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if (kind, t) not in self._vec_cache]
        if missing:
            vecs = np.asarray(self.embedder.embed(missing, kind=kind), dtype=np.float32)
            if len(self._vec_cache) > 20_000:
                self._vec_cache.clear()
            for t, v in zip(missing, vecs, strict=True):
                self._vec_cache[(kind, t)] = v
        dim = int(getattr(self.embedder, "dim", 0) or (next(iter(self._vec_cache.values())).shape[0]))
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([self._vec_cache[(kind, t)] for t in texts])

    async def embed(self, texts: Sequence[str], kind: str) -> np.ndarray:
        return await self.run(self._embed_blocking, list(texts), kind)

    async def search(self, index: SearchIndex, query: str, k: int) -> SearchResult:
        return await self.run(index.search, query, k, self.config.search_mode)

    async def prompt_format(self) -> str:
        if self._prompt_format is None:
            try:
                generator = await self.pool.ready()
            except LLM_ERRORS as error:
                # the model could not load: the answer degrades to extractive (submit raises the same error)
                logger.warning("LLM unavailable: %s", error)
                return "completion"
            # a generator without the attribute (a third-party backend written before it was declared) completes
            self._prompt_format = str(getattr(generator, "prompt_format", "completion"))
        return self._prompt_format

    async def contact_url(self, index: SearchIndex) -> str | None:
        key = id(index)
        if key not in self._contact:
            url = None
            try:
                res = await self.search(index, "kontak alamat email telepon sekretariat program studi", 10)
                for hit in res.hits:
                    blob = f"{hit.url} {hit.title}".lower()
                    if any(m in blob for m in ("kontak", "contact", "hubungi")):
                        url = hit.url
                        break
            except Exception:  # boundary: the pointer is a courtesy; never fail an answer over it
                logger.debug("contact page lookup failed", exc_info=True)
            self._contact = {key: url}
        return self._contact[key]


def hits_json(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    """The hits as the trace shows them."""
    return [
        {"chunk_id": h.chunk_id, "url": h.url, "title": h.title, "score": round(float(h.score), 4),
         "distance": _rounded(getattr(h, "distance", None))}
        for h in hits
    ]


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)
