"""The answer pipeline: follow-up rewrite → facts → retrieve → refine → generate with entropy →
DRAGIN rounds → guards → support check → cited span / extractive answer, or abstention (the ideas and their
equations: docs/answers.md, "Where the ideas come from").

The small base model is never trusted on its own. Abstention comes from the gates (retrieval, anchor coverage,
support); the reply text always comes from the evidence: an LLM span is accepted only when the evidence contains it,
and it is returned with the sentence that supports it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from generation.answer_type import expected_type, expected_unit, is_list_question, type_ok, unit_ok
from generation.calibration import DEFAULT_MODEL_PATH, Calibrator
from generation.compose import (
    abstain_text,
    combine_parts,
    compose_answer,
    disagree_by_year,
    display,
    list_item,
    list_start,
    newest_first,
    whole_date,
)
from generation.entropy import dragin_confidence, mean_entropy
from generation.errors import GenerationError
from generation.facts_render import facts_usable, render_facts
from generation.guards import check_degenerate, is_template_leak
from generation.pool import LLMPool
from generation.prompts import (
    COMPLETION_STOPS,
    build_hyde_prompt,
    build_prompt,
    strip_injection,
    template_text,
)
from generation.quote import column_rows, list_lines, quote_span
from generation.refine import expand_query, rewrite_followup, validate_refinement
from generation.subjects import (
    MAX_CHOICES,
    Entity,
    Inventory,
    ask_back_roles,
    ask_back_text,
    is_ask_back,
    pick,
    refer,
)
from generation.support import (
    EvidenceSentence,
    anchor_coverage,
    check_support,
    corpus_weights,
    idf_weights,
    is_number_anchor,
    is_soft,
    split_evidence,
    stem,
    stems,
    text_stems,
    within_stated_bounds,
)
from generation.telemetry import TelemetryWriter
from generation.text import (
    ALL_OF_THEM,
    is_negated,
    name_words,
    normalize,
    sentences,
    split_aside,
    split_questions,
    strip_clitics,
    words,
)
from generation.types import Answer, Generation, Source, Trace

__all__ = ["ABSTENTION_MODES", "AnswerPipeline", "PipelineConfig", "StopReason"]

logger = logging.getLogger(__name__)


# A sentence naming what the previous reply named, when the student asks for another one ("ada lagi yang …?"):
# larger than any sentence's score range (the weighted components stay within about ±1), so it goes last; set, not
# fitted
EXCLUDED_PENALTY = 1.0
# A list answer shows at most this many lines (the introducing sentence and its items); set, not fitted: the sample
# site's longest list (eight student communities after two introducing sentences) fits
MAX_LIST_LINES = 12
SPAN_SENTENCE_MIN = 0.85  # a model span is kept only inside a sentence scoring ≥ this share of the best one

# What a call to the LLM pool may raise, each answered with the extractive fallback: a GenerationError (a backend's
# failure, which the pool maps to one; its timeout; a closed pool). The built-in types are there for one case only:
# a model that could not load, which the pool re-raises as its factory raised it (FileNotFoundError for a missing
# LLM_MODEL_PATH, OSError writing the bundled model, ValueError for a bad LLM_PROMPT_FORMAT, RuntimeError from
# llama.cpp or from a shut-down executor in ``pool.ready``). Nothing else inside the guarded tries raises them.
LLM_ERRORS: tuple[type[Exception], ...] = (GenerationError, OSError, ValueError, RuntimeError)

# How an evidence sentence is scored: a weighted sum of its components (_Evidence.components, each in 0..1 except
# the rank). lexical = idf-weighted anchor coverage of the sentence; embedding = cosine(question, sentence) mapped
# from 0.70..0.95 to 0..1; chunk = anchor coverage of its chunk; rank = its chunk's retrieval rank (0 = best);
# short = fewer than 4 words and no "Label: value"; off_topic = its chunk misses the question's anchors (below
# anchor_coverage_min); type_miss = it cannot carry the answer type the question wants. See docs/answers.md
# ("Choosing the sentence") for how these were set and measured (bench/fit_evidence.py).
EVIDENCE_WEIGHTS: dict[str, float] = {
    "lexical": 0.55, "embedding": 0.35, "chunk": 0.10, "rank": -0.01, "short": -0.3, "off_topic": -0.5,
    "type_miss": -0.25,
}
EVIDENCE_COMPONENTS = tuple(EVIDENCE_WEIGHTS)


class StopReason:
    STOP_CONFIDENT = "STOP_CONFIDENT"
    STOP_MAX_ITER = "STOP_MAX_ITER"
    FALLBACK_EXTRACTIVE = "FALLBACK_EXTRACTIVE"
    FACTS_LOOKUP = "FACTS_LOOKUP"
    READER_SPAN = "READER_SPAN"
    ABSTAIN_LOW_RETRIEVAL = "ABSTAIN_LOW_RETRIEVAL"
    ABSTAIN_UNSUPPORTED = "ABSTAIN_UNSUPPORTED"
    ABSTAIN_NO_INDEX = "ABSTAIN_NO_INDEX"
    ABSTAIN_EMPTY_QUERY = "ABSTAIN_EMPTY_QUERY"
    ASK_BACK = "ASK_BACK"  # an ambiguous follow-up: the Answer asks back with its ``choices`` (not a refusal)


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    """Pipeline parameters (docs/answers.md explains each); built from Settings in ``bot.wiring.build_pipeline``."""

    top_k: int = 5
    search_mode: str = "hybrid"
    max_tokens: int = 64
    n_ctx: int = 2048
    context_max_docs: int = 5
    context_char_budget: int = 6000
    llm_context_sentences: int = 6
    rq_bypass_confidence: float = 0.7
    rq_similarity_threshold: float = 0.9
    rq_postvalidate_margin: float = 0.15
    rq_jaccard_min: float = 0.2
    dragin_threshold: float = 0.5
    dragin_max_iterations: int = 2
    hyde: bool = False
    support_tau: float = 0.5  # τ of docs/answers.md, "Anchors, support overlap and τ"
    support_sim_min: float = 0.85
    anchor_coverage_min: float = 0.6  # idf-weighted share of the question's anchors the cited chunk must contain
    sentence_coverage_min: float = 0.25  # … and the cited sentence itself
    min_top_similarity: float = 0.80  # cosine(query, best evidence sentence) below this = nothing relevant
    history_window: int = 20
    max_answer_chars: int = 600
    facts_lookup: bool = True  # the structured facts table first (off: retrieval only; an evaluation ablation)
    use_llm: bool = True  # off: no model call, the extractive path alone (an evaluation ablation)
    # "rules": the LLM span, hand evidence weights and the calibrated gate over hand signals (the default: on the
    # sample site's blind sets it still answers more questions right than the reader, docs/evaluation.md); "reader":
    # the learned reader (generation/reader/) reads the top chunks, its span is the answer and its calibrated
    # "no answer" score the gate. make eval and bench/bench_reader.py run both side by side
    answerer: str = "rules"
    reader_chunks: int = 3  # the retrieved chunks the reader reads (its cost grows with each)
    reader_model_dir: str | None = None  # a retrained reader (bench/train_reader.py --out DIR); None: the bundled one
    # the reader gate's threshold; None: the model's own (chosen on the IDK-MRC tune split's dev part). A site's own
    # comes from `python -m bot calibrate` (DATA_DIR/calibration/reader.json)
    reader_threshold: float | None = None
    # a list question shows the page's list around the span: each table row's name with the span's column, or the
    # lines from the span's sentence on (off: the span's sentence or row alone; an evaluation ablation)
    list_columns: bool = True
    # a follow-up that names no subject takes one from the entities the last reply named, asks back when two or three
    # have what it asks, and asks the study program when none has it (generation/subjects.py; off: the word-level
    # follow-up rewrite alone, an evaluation ablation)
    follow_subjects: bool = True
    # "calibrated": the logistic model over the pipeline's signals decides (generation/calibration.py);
    # "thresholds": the hand thresholds above (anchor_coverage_min, min_top_similarity, …); "off": no gate
    abstention: str = "calibrated"

    def __post_init__(self) -> None:
        if self.abstention not in ABSTENTION_MODES:
            raise ValueError(f"unknown ABSTENTION {self.abstention!r}; valid choices: {', '.join(ABSTENTION_MODES)}")
        if self.answerer not in ANSWERERS:
            raise ValueError(f"unknown ANSWERER {self.answerer!r}; valid choices: {', '.join(ANSWERERS)}")


ABSTENTION_MODES = ("calibrated", "thresholds", "off")
ANSWERERS = ("reader", "rules")


@dataclass
class _Evidence:
    hits: list[Any] = field(default_factory=list)
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
class _Turn:
    """What one question carries through the stages (each stage reads and fills its part)."""

    question: str
    history: list[Any]
    trace: Trace
    on_position: Callable[[int], Awaitable[None]] | None = None
    result: dict[str, Any] | None = None  # set by the stage that settles the reply
    # rewrite
    clean: str = ""
    normalized: str = ""
    followup: bool = False
    query: str = ""
    anchor_text: str = ""
    index: Any = None
    # retrieve
    confidence: float = 0.0
    hits: list[Any] = field(default_factory=list)
    contact: str | None = None
    related: list[str] = field(default_factory=list)
    # evidence
    anchor_stems: list[str] = field(default_factory=list)
    list_q: bool = False
    kind: str | None = None
    unit: str | None = None  # the unit a "berapa" question counts in ("berapa jam")
    exclude: tuple[str, ...] = ()  # what the previous reply named, for "ada lagi yang …?" (FollowUp.exclude)
    corpus_w: dict[str, float] | None = None
    q_vec: Any = None
    ev: _Evidence = field(default_factory=_Evidence)
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
    read_hit: Any = None
    read_passage: str = ""
    read_span: Any = None


class AnswerPipeline:
    """Turns a question (and the conversation window) into an ``Answer``. Async; every blocking step runs in an
    executor or in the LLM pool."""

    def __init__(
        self,
        retriever: Callable[[], Any | None],
        pool: LLMPool,
        config: PipelineConfig,
        embedder: Any,
        telemetry: TelemetryWriter | None = None,
        calibrator: Calibrator | None = None,
        reader: Any = None,
    ) -> None:
        self._retriever = retriever
        self._reader = reader  # generation.reader.Reader; loaded on first use when None
        self._reader_lock = threading.Lock()
        # the abstention model; the bundled one unless a site refitted its own (python -m bot calibrate)
        self.calibrator = calibrator if calibrator is not None else _default_calibrator()
        self.pool = pool
        self.config = config
        self.embedder = embedder
        self.telemetry = telemetry
        self._vec_cache: dict[tuple[str, str], np.ndarray] = {}
        self._contact: dict[int, str | None] = {}
        self._prompt_format: str | None = None
        self.evidence_weights: dict[str, float] = dict(EVIDENCE_WEIGHTS)

    @property
    def abstention_mode(self) -> str:
        """The gate in force: "calibrated" needs a model; without one the hand thresholds decide."""
        mode = self.config.abstention
        return "thresholds" if mode == "calibrated" and self.calibrator is None else mode

    # -- helpers -------------------------------------------------------------------------------------------------
    async def _run(self, func: Callable[..., Any], *args: Any) -> Any:
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

    async def _embed(self, texts: Sequence[str], kind: str) -> np.ndarray:
        return await self._run(self._embed_blocking, list(texts), kind)

    async def _search(self, index: Any, query: str, k: int) -> Any:
        return await self._run(index.search, query, k, self.config.search_mode)

    async def _prompt_fmt(self) -> str:
        if self._prompt_format is None:
            try:
                generator = await self.pool.ready()
            except LLM_ERRORS as error:
                # the model could not load: the answer degrades to extractive (submit raises the same error)
                logger.warning("LLM unavailable: %s", error)
                return "completion"
            self._prompt_format = getattr(generator, "prompt_format", "completion")
        return self._prompt_format

    async def _contact_url(self, index: Any) -> str | None:
        key = id(index)
        if key not in self._contact:
            url = None
            try:
                res = await self._search(index, "kontak alamat email telepon sekretariat program studi", 10)
                for hit in res.hits:
                    blob = f"{hit.url} {hit.title}".lower()
                    if any(m in blob for m in ("kontak", "contact", "hubungi")):
                        url = hit.url
                        break
            except Exception:  # the pointer is a courtesy; never fail an answer over it
                logger.debug("contact page lookup failed", exc_info=True)
            self._contact = {key: url}
        return self._contact[key]

    # -- public ----------------------------------------------------------------------------------------------------
    async def answer(
        self,
        question: str,
        history: Sequence[Any] = (),
        *,
        on_position: Callable[[int], Awaitable[None]] | None = None,
    ) -> Answer:
        started = time.perf_counter()
        trace = Trace(trace_id=uuid.uuid4().hex[:16], query=question)
        try:
            window = list(history)[-self.config.history_window :]
            subject = await self._subject(question, window, trace) if self.config.follow_subjects else None
            parts = split_questions(question)
            if subject is not None:
                result = await self._answer_subject(subject, trace, on_position)
            elif len(parts) > 1:
                result = await self._answer_parts(parts, list(history), trace, on_position)
            else:
                result = await self._answer(question, window, trace, on_position)
        except asyncio.CancelledError:
            raise
        total = (time.perf_counter() - started) * 1000
        trace.latency_ms["total"] = round(total, 1)
        answer = Answer(
            answer=result["answer"],
            abstained=result["abstained"],
            sources=result["sources"],
            confidence=result["confidence"],
            iterations=result["iterations"],
            stop_reason=result["stop_reason"],
            latency_ms=total,
            trace=trace,
            highlights=tuple(result.get("highlights", ())),
            choices=tuple(result.get("choices", ())),
        )
        if self.telemetry is not None:
            record = answer.as_json()
            record["ts"] = time.time()
            await self._run(self.telemetry.write, record)
        return answer

    async def replay(self, turns: Sequence[Any]) -> list[Any]:
        """The history a conversation builds: each earlier *user* turn (a str or ``{"role","text"}``) is asked in
        order and the pipeline's own reply follows it, as in real use; assistant turns given in ``turns`` are
        ignored (evaluation and calibration score follow-ups on the bot's own previous replies)."""
        from storage.models import Message

        history: list[Any] = []
        for turn in turns or ():
            role, text = ("user", turn) if isinstance(turn, str) else (str(turn.get("role", "user")), str(turn.get("text", "")))
            if role != "user" or not text.strip():
                continue
            reply = await self.answer(text, history)
            history += [Message(role="user", text=text), Message(role="assistant", text=reply.answer)]
        return history

    async def evidence(self, question: str, history: Sequence[Any] = ()
                       ) -> tuple[list[EvidenceSentence], list[tuple[float, ...]], list[float]]:
        """The evidence sentences the answer would be chosen from, each one's score components
        (EVIDENCE_COMPONENTS) and final score (-1: a heading or a question on the page, never cited), without
        generating; empty when an earlier stage settles the reply (a facts-table answer, nothing retrieved). For
        fitting and explaining the sentence choice (bench/fit_evidence.py)."""
        turn = _Turn(question=question, history=list(history)[-self.config.history_window :],
                     trace=Trace(trace_id=uuid.uuid4().hex[:16], query=question), on_position=None)
        for stage in (self._stage_rewrite, self._stage_facts, self._stage_retrieve, self._stage_evidence):
            await stage(turn)
            if turn.result is not None:
                return [], [], []
        return list(turn.ev.sentences), list(turn.ev.components), list(turn.ev.scores)

    # -- the subject of a follow-up (generation/subjects.py) --------------------------------------------------------
    async def _subject(self, question: str, history: list[Any], trace: Trace) -> _Subject | None:
        """What a follow-up that names no subject refers to, from the entities the last reply named; None when
        the message stands alone, or the word-level rewrite in the rewrite stage should resolve it."""
        index = await self._run(self._retriever)
        if index is None or not callable(getattr(index, "normalize_query", None)):
            return None
        pairs = _exchanges(history)
        if not pairs:
            return None
        inventory = await self._run(Inventory.of, index)

        def formal(text: str) -> str:
            return str(index.normalize_query(text, expand=False))

        def expanded(text: str) -> str:
            return str(index.normalize_query(text))

        asked, reply = pairs[-1]
        if is_ask_back(reply):  # the student answers our ask-back: which one they chose
            offered, context = await self._offered(index, inventory, pairs, expanded, formal)
            chosen = pick(question, offered, context, inventory, expanded, both=ALL_OF_THEM) if offered else ()
            trace.add("subject", decision="pick", chosen=[e.name for e in chosen], offered=[e.name for e in offered])
            if not chosen:
                return None
            return _Subject([_about(formal(asked), e) for e in chosen])
        if not rewrite_followup(question, history).about_subject:
            return None
        ref = refer(question, asked, reply, inventory, formal, expanded)
        trace.add("subject", decision="refer", kind=ref.kind, why=ref.why, attribute=list(ref.attribute),
                  entities=[e.name for e in ref.entities])
        if ref.kind == "carry":
            return _Subject([_about(formal(question), ref.entities[0])])
        if ref.kind == "ask":
            return _Subject([], ask=ref.entities, asked=question)
        if ref.kind == "prodi":
            names = ", ".join(e.name for e in ref.entities[:MAX_CHOICES])
            note = f"Informasi itu tidak tercantum untuk {names}. Untuk program studi:"
            contact = await self._contact_url(index)
            page = inventory.page(contact) if contact else None
            line = inventory.field(page, frozenset(ref.attribute)) if page is not None else None
            if page is not None and line:  # the prodi's own record: its contact page's field
                trace.add("final", stop_reason=StopReason.STOP_CONFIDENT, abstained=False, sources=[page.url])
                return _Subject([], result={"answer": f"{note}\n{line} [1]", "abstained": False,
                                            "sources": (Source(url=page.url, title=page.name),), "confidence": 1.0,
                                            "iterations": 0, "stop_reason": StopReason.STOP_CONFIDENT})
            return _Subject([f"{formal(question).rstrip(' ?')} program studi?"], note=note)
        return None

    async def _offered(self, index: Any, inventory: Inventory, pairs: list[tuple[str, str]],
                       expanded: Callable[[str], str], formal: Callable[[str], str]) -> tuple[tuple[Entity, ...], str]:
        """The candidates the last ask-back offered, found again the way they were found (the pipeline keeps no
        state between turns), and the text to match a typed pick against: the follow-up's reply before it, or,
        for a role word several people's roles share (an e-mail of "the coordinator"), the ask-back's own lines."""
        asked, reply = pairs[-1]
        if len(pairs) >= 2:
            before, before_reply = pairs[-2]
            ref = refer(asked, before, before_reply, inventory, formal, expanded)
            if ref.kind == "ask":
                return ref.entities, before_reply
        facts = getattr(index, "facts", None)
        if facts is None or not hasattr(facts, "lookup"):
            return (), reply
        found = await self._run(facts.lookup, strip_clitics(expanded(asked)))
        if "ask_role" not in (getattr(found, "constraints", {}) or {}):
            return (), reply
        pages = [inventory.page(str(r.get("url", ""))) for r in getattr(found, "rows", ()) or ()]
        return tuple(p for p in pages if p is not None), reply

    async def _answer_subject(self, subject: _Subject, trace: Trace,
                              on_position: Callable[[int], Awaitable[None]] | None) -> dict[str, Any]:
        """The reply once the subject is known: the question about it (each one chosen), with no history (the
        query now stands alone), or the ask-back itself (neither an answer nor a refusal)."""
        if subject.result is not None:
            return subject.result
        if subject.ask:
            trace.add("final", stop_reason=StopReason.ASK_BACK, abstained=False,
                      choices=[e.name for e in subject.ask])
            return {"answer": ask_back_text(subject.asked, subject.ask), "abstained": False, "sources": (),
                    "confidence": 0.0, "iterations": 0, "stop_reason": StopReason.ASK_BACK,
                    "choices": tuple(e.name for e in subject.ask)}
        if len(subject.queries) > 1:
            result = await self._answer_parts(subject.queries, [], trace, on_position)
        else:
            result = await self._answer(subject.queries[0], [], trace, on_position)
        if subject.note and not result["abstained"]:
            result = {**result, "answer": f"{subject.note}\n{result['answer']}"}
        return result

    # -- the stages ------------------------------------------------------------------------------------------------
    async def _answer_parts(
        self,
        parts: Sequence[str],
        history: list[Any],
        trace: Trace,
        on_position: Callable[[int], Awaitable[None]] | None,
    ) -> dict[str, Any]:
        """A message of several questions (generation.text.split_questions): each part answered in turn with the
        parts before it and their replies as history, so "pelatihnya siapa" follows "ada klub catur?" as a
        follow-up would; then one reply (compose.combine_parts)."""
        from storage.models import Message

        done: list[tuple[str, dict[str, Any]]] = []
        for k, part in enumerate(parts):
            trace.add("part", index=k + 1, of=len(parts), question=part)
            result = await self._answer(part, history[-self.config.history_window :], trace, on_position if k == 0 else None)
            done.append((part, result))
            history = [*history, Message(role="user", text=part), Message(role="assistant", text=result["answer"])]
        return combine_parts(done)

    async def _answer(
        self,
        question: str,
        history: list[Any],
        trace: Trace,
        on_position: Callable[[int], Awaitable[None]] | None,
    ) -> dict[str, Any]:
        """Run the stages in order; the first one that settles the reply ends the turn. The trace records each
        stage's name, duration and decision (``trace.stages``)."""
        turn = _Turn(question=question, history=history, trace=trace, on_position=on_position)
        stages: tuple[tuple[str, Callable[[_Turn], Awaitable[str]]], ...] = (
            ("rewrite", self._stage_rewrite),
            ("facts", self._stage_facts),
            ("retrieve", self._stage_retrieve),
        )
        if self.config.answerer == "reader":
            stages += (("read", self._stage_read), ("finalize", self._stage_quote))
        else:
            stages += (
                ("evidence", self._stage_evidence),
                ("generate", self._stage_generate),
                ("compose", self._stage_compose),
                ("gate", self._stage_gate),
                ("finalize", self._stage_finalize),
            )
        for name, stage in stages:
            started = time.perf_counter()
            decision = await stage(turn)
            ms = round((time.perf_counter() - started) * 1000, 1)
            trace.latency_ms[name] = round(trace.latency_ms.get(name, 0.0) + ms, 1)
            trace.stages.append({"name": name, "ms": ms, "decision": decision})
            if turn.result is not None:
                return turn.result
        raise AssertionError("the finalize stage always settles the reply")  # pragma: no cover

    def _abstain(self, turn: _Turn, reason: str) -> str:
        turn.trace.add("final", stop_reason=reason, abstained=True)
        turn.result = {
            "answer": abstain_text(turn.contact, turn.related),
            "abstained": True,
            "sources": (),
            "confidence": turn.confidence,
            "iterations": turn.iterations,
            "stop_reason": reason,
        }
        return f"abstain:{reason}"

    async def _stage_rewrite(self, turn: _Turn) -> str:
        """Instruction-like sentences out, student shorthand normalised, a follow-up resolved with the window."""
        turn.clean = strip_injection(turn.question)
        if turn.clean != turn.question.strip():
            turn.trace.add("sanitize", removed=True, kept=turn.clean)
        if not turn.clean or not any(ch.isalnum() for ch in turn.clean):
            return self._abstain(turn, StopReason.ABSTAIN_EMPTY_QUERY)
        question, aside = split_aside(turn.clean)
        if aside:  # who the student is or why they ask: not words the page must hold, nor what to search for
            turn.trace.add("aside", removed=aside, question=question)
            turn.clean = question
        turn.index = await self._run(self._retriever)  # IndexManager.current() may reload from disk
        if turn.index is None:
            return self._abstain(turn, StopReason.ABSTAIN_NO_INDEX)
        # the follow-up is resolved on the words as typed ("-nya" points back), then normalised as a whole
        follow = rewrite_followup(turn.clean, turn.history)
        normalizer = getattr(turn.index, "normalize_query", None)
        if not callable(normalizer) or not getattr(getattr(turn.index, "config", None), "query_normalization", True):
            normalizer = _as_typed
        resolved = follow.query if follow.rewritten else turn.clean
        turn.normalized = normalizer(turn.clean)  # the question alone, in the site's words
        turn.followup = follow.rewritten
        turn.exclude = follow.exclude
        turn.query = normalizer(resolved)  # … with the long forms of abbreviations added, for retrieval
        # the anchors the evidence must contain: formal words only, so an added long form is not "missing"
        turn.anchor_text = normalizer(resolved, expand=False)
        turn.trace.add("rewrite", followup=follow.rewritten, query=turn.query, normalized=turn.normalized)
        return "followup" if follow.rewritten else ("normalized" if turn.normalized != turn.clean else "as_typed")

    async def _stage_facts(self, turn: _Turn) -> str:
        """The structured facts table (lecturers, courses) answers constraint questions directly."""
        facts = getattr(turn.index, "facts", None)
        if not self.config.facts_lookup or facts is None or not hasattr(facts, "lookup"):
            return "off"
        try:
            found = await self._run(facts.lookup, strip_clitics(turn.query))
        except Exception:
            logger.warning("facts lookup failed", exc_info=True)
            return "error"
        rows = list(getattr(found, "rows", ()) or ()) if found else []
        constraints = dict(getattr(found, "constraints", {}) or {}) if found else {}
        if "ask_role" in constraints and rows:  # two or three roles hold the question's role word
            names = tuple(dict.fromkeys(str(r.get("name")) for r in rows))
            turn.trace.add("facts", constraints=constraints, rows=len(rows))
            turn.trace.add("final", stop_reason=StopReason.ASK_BACK, abstained=False, choices=list(names))
            turn.result = {"answer": ask_back_roles(rows), "abstained": False, "sources": (), "confidence": 0.0,
                           "iterations": 0, "stop_reason": StopReason.ASK_BACK, "choices": names}
            return "ask_back"
        if facts_usable(constraints, rows, turn.query):
            turn.result = await self._facts_answer(turn.index, turn.query, found, turn.trace)
            return "answered"
        if rows:
            turn.trace.add("facts", skipped="name_only", constraints=constraints)
            return "name_only"
        return "no_rows"

    async def _stage_retrieve(self, turn: _Turn) -> str:
        """Hybrid retrieval; below the bypass confidence, the refinement with its validators (docs/answers.md)."""
        cfg = self.config
        result = await self._search(turn.index, turn.query, cfg.top_k)
        turn.trace.add("retrieve", query=turn.query, confidence=round(result.confidence, 4), hits=_hits_json(result.hits))
        decision = "bypass"
        if float(result.confidence) < cfg.rq_bypass_confidence:
            result, turn.query = await self._refine(turn.index, turn.query, result, turn.followup, turn.trace)
            decision = "refined"
        else:
            turn.trace.add("refine", skipped="bypass", confidence=round(float(result.confidence), 4))
        turn.confidence = float(result.confidence)
        turn.contact = await self._contact_url(turn.index)
        turn.hits = list(result.hits)[: cfg.context_max_docs]
        turn.related = _related(turn.hits)
        if not turn.hits:
            return self._abstain(turn, StopReason.ABSTAIN_LOW_RETRIEVAL)
        return decision

    # -- the reader path ------------------------------------------------------------------------------------------
    @property
    def reader(self) -> Any:
        """The learned reader (loaded once, on first use: it dequantises the base model's lower layers)."""
        if self._reader is None:
            with self._reader_lock:
                if self._reader is None:
                    from generation.reader import Reader

                    self._reader = Reader(self.config.reader_model_dir)
        return self._reader

    async def _stage_read(self, turn: _Turn) -> str:
        """The reader reads the top chunks; its best span (by calibrated probability) answers when that probability
        reaches the model's operating threshold, else the reply is a refusal."""
        hits = turn.hits[: max(1, self.config.reader_chunks)]
        passages = [str(h.text) for h in hits]  # the chunk as the page says it (a record names its person)
        reader = await self._run(lambda: self.reader)
        spans = await self._run(reader.read, turn.anchor_text or turn.normalized, passages)
        # which chunk's span answers, and how likely it is right: the reader's chunk selector (the span's margin
        # with the chunk's retrieval score)
        chosen = [None if sp is None else reader.chunk_probability(sp, float(h.score))
                  for h, sp in zip(hits, spans, strict=True)]
        turn.trace.add("read", question=turn.anchor_text, spans=[
            None if sp is None else {"chunk_id": h.chunk_id, "rank": k, "retrieval": round(float(h.score), 4),
                                     "span": sp.text, "start": sp.start, "end": sp.end, "score": round(sp.score, 3),
                                     "null": round(sp.null, 3), "p_span": round(sp.p, 4), "p": round(pc, 4)}
            for k, (h, sp, pc) in enumerate(zip(hits, spans, chosen, strict=True))])
        ranked = [(pc, -k, k) for k, (sp, pc) in enumerate(zip(spans, chosen, strict=True))
                  if sp is not None and pc is not None and sp.text.strip()]
        if not ranked:
            return self._abstain(turn, StopReason.ABSTAIN_UNSUPPORTED)
        p, _, k = max(ranked)
        turn.read_hit, turn.read_passage, turn.read_span = hits[k], passages[k], spans[k]
        turn.p_correct = p
        threshold = self.config.reader_threshold
        if threshold is None:
            threshold = reader.config.threshold
        answer = self.config.abstention == "off" or p >= threshold
        turn.trace.add("reader_gate", p=round(p, 4), threshold=round(threshold, 4),
                       decision="answer" if answer else "abstain")
        if not answer:
            return self._abstain(turn, StopReason.ABSTAIN_UNSUPPORTED)
        return f"answer p={p:.2f}"

    async def _stage_quote(self, turn: _Turn) -> str:
        """The reply quotes the page around the span (its sentence, or its table row whole) with the span marked. A
        list question gets the page's list: each table row's name with the span's column, or the lines from the
        span's sentence on (generation.quote)."""
        hit, span, passage = turn.read_hit, turn.read_span, turn.read_passage
        listing = self.config.list_columns and is_list_question(turn.normalized)
        rows = column_rows(passage, span.start) if listing else None
        lines = None if rows or not listing else list_lines(passage, span.start, MAX_LIST_LINES,
                                                             self.config.max_answer_chars)
        highlights: tuple[str, ...] = ()
        if rows:
            text = "\n".join(f"- {line}" for line in rows[:MAX_LIST_LINES])
            turn.trace.add("quote", kind="column", rows=len(rows))
        elif lines:
            text = "\n".join(lines)
            marked = " ".join(span.text.split())
            highlights = (marked,) if marked and marked in text else ()
            turn.trace.add("quote", kind="list", lines=len(lines))
        else:
            quote = quote_span(passage, span.start, span.end)
            text, highlights = quote.text, quote.highlights
            turn.trace.add("quote", kind="span", span=span.text, quote=text)
        if is_template_leak(text) or not any(ch.isalnum() for ch in text):
            turn.trace.add("final_guard", reason="template_leak")
            return self._abstain(turn, StopReason.ABSTAIN_UNSUPPORTED)
        text = f"{text} [1]"
        sources = (Source(url=hit.url, title=hit.title or hit.url),)
        turn.trace.add("final", stop_reason=StopReason.READER_SPAN, abstained=False, sources=[hit.url])
        turn.result = {
            "answer": text,
            "abstained": False,
            "sources": sources,
            "confidence": round(float(turn.p_correct or 0.0), 4),
            "iterations": 0,
            "stop_reason": StopReason.READER_SPAN,
            "highlights": highlights,
        }
        return StopReason.READER_SPAN

    async def _stage_evidence(self, turn: _Turn) -> str:
        """Split the hits into scored evidence sentences and measure anchor coverage (docs/answers.md); a missing anchor
        gets one anchor-constrained retrieval round."""
        cfg = self.config
        turn.anchor_stems = list(dict.fromkeys(stems(turn.anchor_text)))
        if not turn.anchor_stems:  # no content word to check evidence against (another script, only stop words)
            turn.trace.add("gate", decision="abstain", anchors=[])
            return self._abstain(turn, StopReason.ABSTAIN_LOW_RETRIEVAL)
        turn.list_q = is_list_question(turn.normalized)
        turn.kind = None if turn.list_q else expected_type(turn.normalized)
        turn.unit = None if turn.list_q else expected_unit(turn.anchor_text)  # in formal words ("org" → "orang")
        corpus_w = await self._run(corpus_weights, turn.index, turn.anchor_text)
        if turn.followup:
            # a follow-up asks about its own words; the carried-over topic only narrows the search
            own = set(stems(turn.normalized))
            base = corpus_w or {a: 1.0 for a in turn.anchor_stems}
            corpus_w = {a: w * (1.5 if a in own else 0.5) for a, w in base.items()}
        turn.corpus_w = corpus_w
        turn.q_vec = (await self._embed([turn.query], "query"))[0]
        await self._refresh_evidence(turn)
        decision = "covered"
        if turn.best_cov < cfg.anchor_coverage_min and cfg.dragin_max_iterations > 0:
            missing = [a for a in turn.anchor_stems if not any(a in s for s in turn.ev.hit_stems.values())]
            if missing:
                grown = await self._gap_round(turn.index, f"{turn.query} {' '.join(missing)}", turn.hits, turn.trace, "anchor")
                decision = "anchor_round"
                if grown:
                    turn.hits = grown
                    await self._refresh_evidence(turn)
        turn.trace.add("gate", anchors=turn.anchor_stems, coverage=round(turn.best_cov, 3),
                       top_sentence_similarity=round(turn.top_sim, 4))
        if self._low_evidence(turn):
            turn.trace.add("gate", decision="abstain", coverage=round(turn.best_cov, 3),
                           top_sentence_similarity=round(turn.top_sim, 4))
            return self._abstain(turn, StopReason.ABSTAIN_LOW_RETRIEVAL)
        return decision

    def _low_evidence(self, turn: _Turn) -> bool:
        """The hand-threshold gate ("thresholds" mode); the calibrated gate decides after composing instead."""
        cfg = self.config
        if not turn.ev.sentences:
            return True
        if self.abstention_mode != "thresholds":
            return False
        return turn.best_cov < cfg.anchor_coverage_min or turn.top_sim < cfg.min_top_similarity

    async def _refresh_evidence(self, turn: _Turn) -> None:
        turn.ev = await self._evidence(turn.hits, turn.anchor_stems, turn.q_vec, turn.corpus_w, turn.kind, turn.unit,
                                       turn.exclude)
        turn.best_cov = max(turn.ev.coverage_chunk.values(), default=0.0)
        vecs = turn.ev.vectors
        turn.top_sim = float(np.max(vecs @ turn.q_vec)) if vecs is not None and len(vecs) else 0.0

    async def _stage_generate(self, turn: _Turn) -> str:
        """Generate with per-token entropy; DRAGIN: an uncertain draft re-retrieves the gap, at most N rounds."""
        cfg = self.config
        if not cfg.use_llm:
            turn.trace.add("generate", skipped="use_llm=false")
            return "off"
        fmt = await self._prompt_fmt()
        last_context: list[str] = []
        decision = "confident"
        while True:
            context = self._llm_context(turn.ev)
            if turn.gen is not None and [c.text for c in context] == last_context:
                turn.trace.add("dragin", iteration=turn.iterations, decision="same_context")  # same prompt, same output
                break
            last_context = [c.text for c in context]
            prompt = build_prompt(fmt, turn.anchor_text, [s.text for s in context])
            try:
                turn.gen = await self.pool.submit(
                    prompt, max_tokens=cfg.max_tokens, stop=COMPLETION_STOPS if fmt == "completion" else (),
                    on_position=turn.on_position,
                )
            except LLM_ERRORS as error:
                llm_error = f"{type(error).__name__}: {error}"
                logger.warning("generation failed, answering extractively: %s", llm_error)
                turn.trace.add("generate", error=llm_error)
                turn.gen, turn.span = None, None
                return "llm_error"
            turn.conf_dragin = dragin_confidence(turn.gen.entropies)
            turn.span = await self._accept_span(turn.gen.text, turn.ev, turn.normalized, fmt, turn.trace)
            turn.trace.add(
                "generate", iteration=turn.iterations, text=turn.gen.text,
                entropies=[round(e, 4) for e in turn.gen.entropies], mean_entropy=round(mean_entropy(turn.gen.entropies), 4),
                conf_dragin=round(turn.conf_dragin, 4), prompt_tokens=turn.gen.prompt_tokens,
                completion_tokens=turn.gen.completion_tokens, accepted_span=turn.span,
            )
            if turn.conf_dragin >= cfg.dragin_threshold or turn.iterations >= cfg.dragin_max_iterations:
                break
            # DRAGIN: re-refine with the draft (or a HyDE passage on the second round), retrieve the gap, regenerate
            turn.iterations += 1
            decision = f"dragin{turn.iterations}"
            gap_query = await self._gap_query(fmt, turn.query, turn.gen, turn.iterations, turn.trace)
            grown = await self._gap_round(turn.index, gap_query, turn.hits, turn.trace, f"dragin{turn.iterations}")
            if not grown:
                turn.trace.add("dragin", iteration=turn.iterations, decision="no_new_hits")
                break
            turn.hits = grown
            await self._refresh_evidence(turn)
            if self._low_evidence(turn):
                turn.trace.add("gate", decision="abstain", coverage=round(turn.best_cov, 3),
                               top_sentence_similarity=round(turn.top_sim, 4))
                return self._abstain(turn, StopReason.ABSTAIN_LOW_RETRIEVAL)
        return decision

    async def _stage_compose(self, turn: _Turn) -> str:
        """Choose the sentences to show: the page's lines for a list, else the span's sentence or the best 1–2."""
        ev = turn.ev
        turn.trace.add("context", chunk_ids=[h.chunk_id for h in turn.hits])
        if turn.list_q and ev.sentences and max(ev.scores) >= 0:
            turn.chosen = self._choose_list(ev)
            turn.span = None  # a list answer is the page's own lines
        else:
            turn.chosen = self._choose_sentences(ev, turn.span)
        if not turn.chosen:
            return self._abstain(turn, StopReason.ABSTAIN_UNSUPPORTED)
        top = turn.chosen[0]
        weights = ev.weights or idf_weights(turn.anchor_stems, list(ev.hit_stems.values()))
        turn.cov_chunk = ev.coverage_chunk.get(top.chunk_id, 0.0)
        sentence_stems = _with_bounds(text_stems(display(top)), ev, top)
        turn.cov_sentence = anchor_coverage(turn.anchor_stems, sentence_stems, weights)
        chunk_stems = ev.hit_stems.get(top.chunk_id, set())
        turn.missing = [a for a in turn.anchor_stems if a not in chunk_stems]
        top_weight = max((weights.get(a, 1.0) for a in turn.anchor_stems), default=1.0) or 1.0
        turn.max_missing = max((weights.get(a, 1.0) / top_weight for a in turn.missing), default=0.0)
        numbers = {a for a in turn.anchor_stems if is_number_anchor(a)}
        turn.numbers_ok = numbers <= chunk_stems
        # the anchors the question writes as names, marked in the anchor table (which missing anchors were names)
        names = {stem(w) for w in name_words(turn.anchor_text)} & set(turn.anchor_stems)
        turn.negated = is_negated(turn.anchor_text)
        if turn.negated:
            cited_hit = next((h for h in turn.hits if h.chunk_id == top.chunk_id), None)
            turn.negation_ok = is_negated(f"{cited_hit.title} {cited_hit.text}" if cited_hit else top.text)
        turn.type_ok = turn.list_q or type_ok(turn.kind, " ".join([turn.span or ""] + [display(c) for c in turn.chosen]))
        # each anchor's weight and where it was found: where an answer was lost, and what a refit of the soft
        # anchor weight needs (bench/fit_abstention.py)
        anchor_table = [{"stem": a, "weight": round(weights.get(a, 1.0), 4), "soft": is_soft(a, question_stems=turn.anchor_stems),
                         "name": a in names, "chunk": a in chunk_stems, "sentence": a in sentence_stems}
                        for a in turn.anchor_stems]
        turn.trace.add("support", sentence=top.text, coverage_chunk=round(turn.cov_chunk, 3),
                       coverage_sentence=round(turn.cov_sentence, 3), anchors=anchor_table)
        return "list" if turn.list_q else ("span" if turn.span else "extractive")

    def features(self, turn: _Turn) -> dict[str, float | None]:
        """The calibrated gate's signals (generation.calibration.FEATURES), each in 0..1; None when not measured."""
        top_hit = turn.hits[0] if turn.hits else None
        top_doc = top_hit.doc_id if top_hit is not None else None
        other = [float(h.score) for h in turn.hits if h.doc_id != top_doc]
        top_score = float(top_hit.score) if top_hit is not None else 0.0
        cited = turn.chosen[0] if turn.chosen else None
        ev = turn.ev
        cited_score = 0.0
        if cited is not None and ev is not None:
            cited_score = max((sc for s, sc in zip(ev.sentences, ev.scores, strict=True) if s is cited), default=0.0)
        return {
            "retrieval_confidence": float(turn.confidence),
            "top_cosine": 1.0 - float(getattr(top_hit, "distance", 1.0) or 1.0) if top_hit is not None else 0.0,
            "top_sentence_similarity": float(turn.top_sim),
            "anchor_coverage": float(turn.cov_chunk),
            "sentence_coverage": float(turn.cov_sentence),
            "max_missing_anchor": float(turn.max_missing),
            # the model's own signals are missing, not low, when it failed or is off (the gate then ignores them)
            "span_accepted": float(turn.span is not None) if turn.gen is not None else None,
            "span_in_cited": (float(bool(turn.span and cited is not None and normalize(turn.span) in normalize(cited.text)))
                              if turn.gen is not None else None),
            "type_match": float(turn.type_ok),
            "numbers_present": float(turn.numbers_ok),
            # not measured (None, the model's mean: no push either way) when the question does not negate
            "negation_present": float(turn.negation_ok) if turn.negated else None,
            "llm_confidence": float(turn.conf_dragin) if turn.gen is not None else None,
            "page_margin": max(0.0, top_score - max(other)) if other else top_score,
            "evidence_score": float(cited_score),
        }

    async def _stage_gate(self, turn: _Turn) -> str:
        """Answer or abstain: the calibrated model (default), the hand thresholds, or nothing (an ablation)."""
        cfg = self.config
        feats = self.features(turn)
        turn.trace.add("features", **{k: None if v is None else round(v, 4) for k, v in feats.items()})
        if self.abstention_mode == "off":
            return "off"
        # the model was fitted on replies where the LLM ran; without its signals (LLM failed or off) it is outside
        # what it was fitted on, and the hand thresholds decide, as when there is no model at all
        if self.abstention_mode == "calibrated" and self.calibrator is not None and turn.gen is not None:
            p = self.calibrator.probability(feats)
            turn.p_correct = p
            answer = p >= self.calibrator.threshold
            turn.trace.add("calibrated_gate", p=round(p, 4), threshold=round(self.calibrator.threshold, 4),
                           decision="answer" if answer else "abstain")
            if not answer:
                # the stop reason only names the likelier cause (evidence missing the question's words, or not)
                reason = StopReason.ABSTAIN_LOW_RETRIEVAL if (feats["anchor_coverage"] or 0.0) < 0.5 else StopReason.ABSTAIN_UNSUPPORTED
                return self._abstain(turn, reason)
            return f"answer p={p:.2f}"
        if turn.cov_chunk < cfg.anchor_coverage_min or turn.cov_sentence < cfg.sentence_coverage_min:
            return self._abstain(turn, StopReason.ABSTAIN_UNSUPPORTED)
        if not turn.numbers_ok:  # numbers and years in the question ("semester 5") must be in the cited chunk
            turn.trace.add("support", decision="abstain", missing_numbers=[a for a in turn.missing if is_number_anchor(a)])
            return self._abstain(turn, StopReason.ABSTAIN_UNSUPPORTED)
        if not turn.type_ok:
            turn.trace.add("answer_type", expected=turn.kind, decision="abstain")
            return self._abstain(turn, StopReason.ABSTAIN_UNSUPPORTED)
        return "answer"

    async def _stage_finalize(self, turn: _Turn) -> str:
        """The reply: the direct answer first, then the cited sentence(s); never template text."""
        cfg = self.config
        chosen, span = turn.chosen, turn.span
        lead = span if span and chosen and normalize(span) in normalize(chosen[0].text) else None
        if lead and turn.ev.bounded.get(chosen[0].chunk_id):
            # the question's value meets the page only through a stated bound: which side of it the value falls on
            # is a comparison the small model does not make reliably, so the stating sentence answers on its own
            turn.trace.add("lead", dropped=lead, reason="value_against_bound")
            lead = None
        widened = whole_date(lead, chosen[0].text) if lead else lead  # "2025" copied out of "12 Maret 2025"
        if widened != lead:
            turn.trace.add("lead", widened=lead, reason="part_of_a_date")
            lead = widened
        label_from = "" if turn.followup else turn.anchor_text  # the question in formal words, nothing added
        text, sources = compose_answer(lead, chosen, as_list=turn.list_q, question=label_from)
        if len(text) > cfg.max_answer_chars:
            text, sources = compose_answer(span, chosen[:1], question=label_from)
        if is_template_leak(text) or not any(ch.isalnum() for ch in text):
            # evidence is neutralised, so this should not happen; but no template text may ever reach a student
            turn.trace.add("final_guard", reason="template_leak")
            return self._abstain(turn, StopReason.ABSTAIN_UNSUPPORTED)
        if span is None:
            reason = StopReason.FALLBACK_EXTRACTIVE
        elif turn.conf_dragin >= cfg.dragin_threshold:
            reason = StopReason.STOP_CONFIDENT
        else:
            reason = StopReason.STOP_MAX_ITER
        if turn.p_correct is not None:
            final_conf = round(turn.p_correct, 4)
        else:
            final_conf = round(min(1.0, 0.5 * turn.cov_chunk + 0.25 * max(turn.confidence, 0.0) + 0.25 * turn.conf_dragin), 4)
        turn.trace.add("final", stop_reason=reason, abstained=False, sources=[s.url for s in sources])
        turn.result = {
            "answer": text,
            "abstained": False,
            "sources": sources,
            "confidence": final_conf,
            "iterations": turn.iterations,
            "stop_reason": reason,
        }
        return reason

    async def _facts_answer(self, index: Any, query: str, found: Any, trace: Trace) -> dict[str, Any]:
        urls = list(dict.fromkeys(getattr(found, "urls", ()) or ()))
        titles: dict[str, str] = {}
        for row in getattr(found, "rows", ()) or ():
            url = str(row.get("url", ""))
            if url and url not in titles:
                titles[url] = str(row.get("name") or "") if row.get("table") == "lecturers" else "Kurikulum"
        sources = tuple(Source(url=u, title=titles.get(u) or u) for u in urls) or (Source(url="", title="Tabel fakta"),)
        trace.add("facts", constraints=getattr(found, "constraints", {}), rows=len(getattr(found, "rows", ()) or ()))
        trace.add("final", stop_reason=StopReason.FACTS_LOOKUP, abstained=False)
        text = render_facts(dict(getattr(found, "constraints", {}) or {}), list(getattr(found, "rows", ()) or ()))
        return {
            "answer": text or str(found.text).strip(),
            "abstained": False,
            "sources": sources,
            "confidence": 1.0,
            "iterations": 0,
            "stop_reason": StopReason.FACTS_LOOKUP,
        }

    async def _refine(self, index: Any, query: str, result: Any, followup: bool, trace: Trace) -> tuple[Any, str]:
        cfg = self.config
        candidate = expand_query(query)
        if normalize(candidate) == normalize(query):
            trace.add("refine", candidate=candidate, decision="unchanged")
            return result, query
        vecs = await self._embed([query, candidate], "query")
        cosine = float(vecs[0] @ vecs[1])
        cand_result = await self._search(index, candidate, cfg.top_k)
        v = validate_refinement(
            query,
            candidate,
            cosine,
            followup=followup,
            orig_sources={h.doc_id for h in result.hits},
            cand_sources={h.doc_id for h in cand_result.hits},
            orig_top_distance=_top_distance(result.hits),
            cand_top_distance=_top_distance(cand_result.hits),
            sim_threshold=cfg.rq_similarity_threshold,
            margin=cfg.rq_postvalidate_margin,
            jaccard_min=cfg.rq_jaccard_min,
        )
        trace.add("refine", candidate=candidate, decision=v.reason, cosine=round(v.cosine, 4), jaccard=round(v.jaccard, 3),
                  hits=_hits_json(cand_result.hits) if v.accepted else None)
        if v.accepted:
            return cand_result, candidate
        return result, query

    async def _evidence(
        self,
        hits: list[Any],
        anchor_stems: list[str],
        q_vec: np.ndarray,
        corpus_w: dict[str, float] | None = None,
        kind: str | None = None,
        unit: str | None = None,
        exclude: Sequence[str] = (),
    ) -> _Evidence:
        ev = _Evidence(hits=list(hits))
        ev.sentences = split_evidence(hits, max_sentences=60)
        numbers = [a for a in anchor_stems if is_number_anchor(a)]
        for h in hits:
            ev.hit_stems[h.chunk_id] = text_stems(f"{h.title} {h.text}")
            # a value the student gives ("IP 2,9") is on a page that states the rule as a bound ("di bawah 3,00")
            bounded = within_stated_bounds([n for n in numbers if n not in ev.hit_stems[h.chunk_id]], h.text)
            if bounded:
                ev.bounded[h.chunk_id] = bounded
                ev.hit_stems[h.chunk_id] |= bounded
        weights = corpus_w or idf_weights(anchor_stems, list(ev.hit_stems.values()))
        ev.weights = weights
        ev.coverage_chunk = {cid: anchor_coverage(anchor_stems, s, weights) for cid, s in ev.hit_stems.items()}
        if not ev.sentences:
            ev.vectors = np.zeros((0, 1), dtype=np.float32)
            return ev
        ev.vectors = await self._embed([s.text for s in ev.sentences], "passage")
        sims = ev.vectors @ q_vec
        # scored as shown: a "Label: value" row carries its page title (compose.display), so the page's subject
        # counts for the row (a community page's "Dosen pembina: …" row answers "siapa pembina komunitas itu")
        shown = [display(s) for s in ev.sentences]
        # … and cited under its page's title: the page's subject counts for each of its sentences ("minimal 640 jam"
        # on a magang page answers "magang berapa jam"); a page without a title (a plain passage) adds nothing
        titles = {t: text_stems(t) for t in {s.title or "" for s in ev.sentences}}
        sent_stems = [text_stems(text) | titles[s.title or ""] for s, text in zip(ev.sentences, shown, strict=True)]
        sent_stems = [_with_bounds(st, ev, s) for s, st in zip(ev.sentences, sent_stems, strict=True)]
        sent_weights = corpus_w or idf_weights(anchor_stems, sent_stems)
        weight = np.asarray([self.evidence_weights[c] for c in EVIDENCE_COMPONENTS])
        for i, s in enumerate(ev.sentences):
            chunk_cov = ev.coverage_chunk.get(s.chunk_id, 0.0)
            parts = (
                anchor_coverage(anchor_stems, sent_stems[i], sent_weights),
                min(max((float(sims[i]) - 0.7) / 0.25, 0.0), 1.0),
                chunk_cov,
                float(s.hit_rank),
                # headings say little on their own; a "Label: value" line (Telepon: (0341) 558933) is a fact
                float(len(words(s.text)) < 4 and ":" not in s.text),
                # a sentence from a chunk that misses the question's anchors cannot be the cited answer
                float(chunk_cov < self.config.anchor_coverage_min),
                # the finalizer (docs/answers.md): a "berapa"/"kapan"/"siapa" question wants a sentence that can carry a
                # number, a time or a name (display() adds the page title to "Label: value" lines); a number in
                # another unit than the question names ("100 SKS" for "berapa jam") is half a miss
                1.0 if kind is not None and not type_ok(kind, shown[i]) else (0.5 if not unit_ok(unit, shown[i]) else 0.0),
            )
            ev.components.append(parts)
            score = float(weight @ np.asarray(parts))
            if exclude and _names_any(shown[i], exclude):
                score -= EXCLUDED_PENALTY  # "ada lagi yang …?": what the previous reply named is not the answer
            ev.scores.append(score)
            ev.citable.append(True)
        # a question on the page (an FAQ entry) or a heading is not an answer; the sentence after it usually is
        sections = {h.chunk_id: (getattr(h, "section", "") or "", getattr(h, "title", "") or "") for h in hits}
        for i, s in enumerate(ev.sentences):
            if s.text.rstrip().endswith("?") or _is_heading(s.text, *sections.get(s.chunk_id, ("", ""))):
                nxt = i + 1
                if nxt < len(ev.sentences) and ev.sentences[nxt].chunk_id == s.chunk_id:
                    ev.scores[nxt] = max(ev.scores[nxt], ev.scores[i] - 0.02)
                ev.scores[i] = -1.0
                ev.citable[i] = False
        return ev

    def _llm_context(self, ev: _Evidence) -> list[EvidenceSentence]:
        """The best sentences within the character budget (and the n_ctx budget), best first."""
        cfg = self.config
        # ~3 characters per token for Indonesian with these tokenizers; keep room for the examples and the answer
        char_budget = min(cfg.context_char_budget, max(400, (cfg.n_ctx - cfg.max_tokens - 200) * 3))
        order = sorted(range(len(ev.sentences)), key=lambda i: -ev.scores[i])
        chosen: list[int] = []
        used = 0
        for i in order[: cfg.llm_context_sentences]:
            n = len(ev.sentences[i].text) + 1
            if used + n > char_budget:
                continue
            chosen.append(i)
            used += n
        # best first: a small model tends to copy from the first matching sentence
        return [ev.sentences[i] for i in chosen]

    async def _accept_span(self, text: str, ev: _Evidence, question: str, fmt: str, trace: Trace) -> str | None:
        """Accept the model's output only when it is clean and the evidence contains it."""
        cfg = self.config
        ctx_words = frozenset(w for s in ev.sentences for w in words(s.text))
        verdict = check_degenerate(text, prompt=template_text(fmt), context_words=ctx_words)
        if verdict.degenerate:
            trace.add("guard", degenerate=True, reason=verdict.reason, template_leak=verdict.template_leak)
            return None
        candidate = text.strip().strip("\"'").rstrip(".").strip()
        if normalize(candidate) in {"tidak tahu", "tidak diketahui", "maaf", "tidak ada"}:
            trace.add("guard", degenerate=False, reason="model_declined")
            return None
        norm = normalize(candidate)
        q_norm = set(stems(question))
        c_stems = stems(candidate)
        if c_stems and set(c_stems) <= q_norm and len(norm.split()) > 1:
            trace.add("guard", degenerate=False, reason="echoes_question")
            return None
        # the span must sit in one of the strongest sentences: a small model often copies a wrong date or number
        # from a weaker sentence, and then the best sentence (extractive) is the better answer
        top = max(ev.scores, default=0.0)
        strong = [normalize(s.text) for s, sc in zip(ev.sentences, ev.scores, strict=True) if sc >= SPAN_SENTENCE_MIN * top]
        if len(norm.split()) <= 25:
            if any(norm and norm in s for s in strong):
                return candidate
            if len(norm.split()) < 6:
                trace.add("guard", degenerate=False, reason="span_not_in_evidence", span=candidate)
                return None
        # longer or paraphrased output (chat models): keep only the supported sentences
        claims = sentences(candidate) or [candidate]
        ctx_stems = set().union(*ev.hit_stems.values()) if ev.hit_stems else set()
        claim_vecs = (await self._embed(claims, "passage")) if ev.vectors is not None and len(ev.vectors) else None
        results = check_support(claims, ctx_stems, claim_vecs, ev.vectors, tau=cfg.support_tau, sim_min=cfg.support_sim_min)
        kept = [r.sentence for r in results if r.supported]
        trace.add("support_check", claims=[{"text": r.sentence, "supported": r.supported, "overlap": round(r.overlap, 3),
                                            "similarity": round(r.similarity, 3)} for r in results])
        if not kept:
            return None
        # a run-on past the answer into the next lines of the context: its first statement that a strong sentence
        # holds is the answer (joined, the statements would match no one sentence and pull the citation elsewhere)
        if len(kept) > 1:
            for claim in kept:
                short = claim.strip().rstrip(".").strip()
                key = normalize(short)
                if key and any(key in s for s in strong):
                    trace.add("span", first_statement=short, statements=len(kept))
                    return short
        joined = " ".join(kept).strip().rstrip(".")
        return joined if len(joined) <= 300 else None

    def _choose_list(self, ev: _Evidence) -> list[EvidenceSentence]:
        """A list question: the best sentence and the lines that follow it in the same chunk (the items). When the
        best line is an item in the middle of a run ("Akademisi dan Peneliti: …"), the list starts with the sentence
        introducing the run (compose.list_start); an item line counts by the name it shows (compose.list_item)."""
        order = sorted(range(len(ev.sentences)), key=lambda i: -ev.scores[i])
        best = order[0]
        lines = [s for s in ev.sentences if s.chunk_id == ev.sentences[best].chunk_id]  # the best line's chunk, in order
        first = list_start([s.text for s in lines], lines.index(ev.sentences[best]))
        chosen: list[EvidenceSentence] = []
        used = 0
        for s in lines[first:]:
            if len(chosen) >= MAX_LIST_LINES or (chosen and s.text.rstrip().endswith("?")):
                break
            size = len(list_item(s.text) or s.text)
            if chosen and used + size > self.config.max_answer_chars:
                break
            chosen.append(s)
            used += size
        return chosen

    def _choose_sentences(self, ev: _Evidence, span: str | None) -> list[EvidenceSentence]:
        """The sentence(s) to show: the best-scoring one containing the span, or the best 1–2 (extractive).

        Headings and the page's own questions are never cited. With the hand thresholds, a negative best score
        (every sentence from a chunk that misses the question's words) abstains here; with the calibrated gate the
        best sentence is composed anyway and the gate decides on all its signals (its evidence score among them)."""
        order = sorted((i for i in range(len(ev.sentences)) if ev.citable[i]), key=lambda i: -ev.scores[i])
        if not order or (self.abstention_mode == "thresholds" and ev.scores[order[0]] < 0):
            return []
        if span:
            norm = normalize(span)
            top_score = ev.scores[order[0]]
            containing = [i for i in order if norm and norm in normalize(ev.sentences[i].text)
                          and _near(ev.scores[i], top_score, SPAN_SENTENCE_MIN)]
            if containing:
                if containing[0] == order[0]:
                    return [ev.sentences[order[0]]]
                # the model chose a near-best sentence: show the best one first, then the model's
                return [ev.sentences[order[0]], ev.sentences[containing[0]]]
            span_stems = set(stems(span))
            eligible = [i for i in order if _near(ev.scores[i], top_score, SPAN_SENTENCE_MIN)]
            if span_stems and eligible:
                best = max(eligible, key=lambda i: (len(span_stems & set(stems(ev.sentences[i].text))), ev.scores[i]))
                if len(span_stems & set(stems(ev.sentences[best].text))) / len(span_stems) >= self.config.support_tau:
                    return [ev.sentences[best]]
        top = ev.scores[order[0]]
        rival = next((i for i in order[1:] if _near(ev.scores[i], top, 0.9) and ev.sentences[i].url != ev.sentences[order[0]].url
                      and disagree_by_year(ev.sentences[order[0]], ev.sentences[i])), None)
        if rival is not None:  # two pages, two years: the newer first, and the older one said too
            return newest_first([ev.sentences[order[0]], ev.sentences[rival]])
        chosen = [order[0]]
        for i in order[1:]:
            if len(chosen) >= 2:
                break
            if _near(ev.scores[i], top, 0.9) and ev.sentences[i].chunk_id == ev.sentences[order[0]].chunk_id:
                chosen.append(i)
        chosen.sort(key=lambda i: (ev.sentences[i].hit_rank, ev.sentences[i].index))
        return [ev.sentences[i] for i in chosen]

    async def _gap_query(self, fmt: str, query: str, gen: Generation, iteration: int, trace: Trace) -> str:
        if self.config.hyde and iteration == 2:
            try:
                hyde = await self.pool.submit(build_hyde_prompt(fmt, query), max_tokens=48, stop=("\n",) if fmt == "completion" else ())
                if not check_degenerate(hyde.text).degenerate:
                    trace.add("hyde", passage=hyde.text)
                    return f"{query} {hyde.text}"
            except LLM_ERRORS as error:
                trace.add("hyde", error=str(error))
        draft = gen.text if not check_degenerate(gen.text).degenerate else ""
        return f"{query} {draft}".strip()

    async def _gap_round(self, index: Any, gap_query: str, hits: list[Any], trace: Trace, label: str) -> list[Any] | None:
        """Retrieve with the gap query; return the merged hit list when it brought new chunks (novelty), else None."""
        res = await self._search(index, gap_query, self.config.top_k)
        known = {h.chunk_id for h in hits}
        new = [h for h in res.hits if h.chunk_id not in known]
        trace.add("gap_retrieve", round=label, query=gap_query, new_hits=_hits_json(new))
        if not new:
            return None
        return hits + new[: self.config.context_max_docs]


@dataclass(frozen=True, slots=True)
class _Subject:
    """A follow-up resolved to its subject: the standalone question(s) to answer, or the entities to ask back
    between (``ask``, with the follow-up ``asked``); ``note`` goes before the answer (the prodi instead)."""

    queries: list[str]
    ask: tuple[Entity, ...] = ()
    asked: str = ""
    note: str = ""
    result: dict[str, Any] | None = None  # settled already (the prodi's field from its contact page)


def _exchanges(history: Sequence[Any]) -> list[tuple[str, str]]:
    """(user message, the reply to it) pairs of the window, oldest first."""
    pairs: list[tuple[str, str]] = []
    pending: str | None = None
    for m in history:
        role, text = getattr(m, "role", ""), str(getattr(m, "text", ""))
        if role == "user":
            pending = text
        elif role == "assistant" and pending is not None:
            pairs.append((pending, text))
            pending = None
    return pairs


def _about(question: str, entity: Entity) -> str:
    """The follow-up with its subject named: "email apa" + Supriyono → "email apa Supriyono?"."""
    return f"{question.strip().rstrip('?').strip()} {entity.plain}?"


def _with_bounds(found: set[str], ev: _Evidence, sentence: EvidenceSentence) -> set[str]:
    """A sentence's stems plus the question's numbers its chunk matched through a stated bound (``_Evidence.bounded``)
    when the sentence itself states that bound."""
    numbers = ev.bounded.get(sentence.chunk_id)
    if not numbers:
        return found
    return found | within_stated_bounds(sorted(numbers - found), sentence.text)


def _names_any(text: str, names: Sequence[str]) -> bool:
    """``text`` names one of ``names`` (as a whole word, ignoring case)."""
    low = text.lower()
    return any(re.search(rf"(?<!\w){re.escape(n.lower())}(?!\w)", low) for n in names if n)


def _near(score: float, top: float, share: float) -> bool:
    """``score`` is within ``1 - share`` of the best score ``top`` (≥ share·top for a positive top; the same
    distance below a negative one)."""
    return score >= top - (1.0 - share) * abs(top)


def _as_typed(text: str, *, expand: bool = True) -> str:
    """The normaliser's stand-in when normalisation is off (or the index has none)."""
    return text.strip()


def _is_heading(text: str, section: str, title: str) -> bool:
    """A heading line: the chunk's own section or page title, or a short label without a verb-like ending,
    number, colon or full stop ("Sambutan Ketua Program Studi")."""
    line = text.strip()
    norm = normalize(line)
    if norm and norm in {normalize(section), normalize(title)}:
        return True
    tokens = line.split()
    if not 1 <= len(tokens) <= 6 or any(ch.isdigit() or ch in ".,:;!?()@" for ch in line):
        return False  # a name with its titles ("Dr. Rina, M.T."), a label, a number or a sentence
    capitalised = sum(1 for t in tokens if t[:1].isupper())
    return capitalised >= max(2, len(tokens) - 1)


@functools.lru_cache(maxsize=1)
def _default_calibrator() -> Calibrator | None:
    try:
        return Calibrator.load(DEFAULT_MODEL_PATH)
    except ValueError as error:  # not fitted yet, or unreadable: the hand thresholds decide
        logger.warning("%s; falling back to the hand thresholds", error)
        return None


def _top_distance(hits: Sequence[Any]) -> float | None:
    ds = [h.distance for h in hits if getattr(h, "distance", None) is not None]
    return min(ds) if ds else None


def _hits_json(hits: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {"chunk_id": h.chunk_id, "url": h.url, "title": h.title, "score": round(float(h.score), 4),
         "distance": None if getattr(h, "distance", None) is None else round(float(h.distance), 4)}
        for h in hits
    ]


def _related(hits: Sequence[Any]) -> list[str]:
    seen: dict[str, None] = {}
    for h in hits:
        if h.title:
            seen.setdefault(h.title, None)
    return list(seen)[:3]

