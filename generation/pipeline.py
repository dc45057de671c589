"""The answer pipeline: follow-up rewrite → facts → retrieve → refine (seed 004 §3) → generate with entropy →
DRAGIN rounds (seed 003) → guards → support check → cited span / extractive answer, or abstention (seed 002).

The small base model is never trusted on its own. Abstention comes from the gates (retrieval, anchor coverage,
support); the reply text always comes from the evidence: an LLM span is accepted only when the evidence contains it,
and it is returned with the sentence that supports it.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from generation.answer_type import expected_type, is_list_question, type_ok
from generation.compose import abstain_text, compose_answer, display
from generation.entropy import dragin_confidence, mean_entropy
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
from generation.refine import expand_query, rewrite_followup, validate_refinement
from generation.support import (
    EvidenceSentence,
    anchor_coverage,
    check_support,
    corpus_weights,
    idf_weights,
    split_evidence,
    stems,
    text_stems,
)
from generation.telemetry import TelemetryWriter
from generation.text import normalize, sentences, strip_clitics, words
from generation.types import Answer, Generation, Source, Trace

__all__ = ["AnswerPipeline", "PipelineConfig", "StopReason"]

logger = logging.getLogger(__name__)


SPAN_SENTENCE_MIN = 0.85  # a model span is kept only inside a sentence scoring ≥ this share of the best one


class StopReason:
    STOP_CONFIDENT = "STOP_CONFIDENT"
    STOP_MAX_ITER = "STOP_MAX_ITER"
    FALLBACK_EXTRACTIVE = "FALLBACK_EXTRACTIVE"
    FACTS_LOOKUP = "FACTS_LOOKUP"
    ABSTAIN_LOW_RETRIEVAL = "ABSTAIN_LOW_RETRIEVAL"
    ABSTAIN_UNSUPPORTED = "ABSTAIN_UNSUPPORTED"
    ABSTAIN_NO_INDEX = "ABSTAIN_NO_INDEX"
    ABSTAIN_EMPTY_QUERY = "ABSTAIN_EMPTY_QUERY"


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    """Pipeline parameters (seed 004's defaults); built from Settings in ``bot.wiring.build_pipeline``."""

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
    support_tau: float = 0.5  # seed 002's τ_overlap
    support_sim_min: float = 0.85
    anchor_coverage_min: float = 0.6  # idf-weighted share of the question's anchors the cited chunk must contain
    sentence_coverage_min: float = 0.25  # … and the cited sentence itself
    min_top_similarity: float = 0.80  # cosine(query, best evidence sentence) below this = nothing relevant
    history_window: int = 20
    max_answer_chars: int = 600
    facts_lookup: bool = True  # the structured facts table first (off: retrieval only; an evaluation ablation)


@dataclass
class _Evidence:
    hits: list[Any] = field(default_factory=list)
    sentences: list[EvidenceSentence] = field(default_factory=list)
    vectors: np.ndarray | None = None
    scores: list[float] = field(default_factory=list)
    coverage_chunk: dict[str, float] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    hit_stems: dict[str, set[str]] = field(default_factory=dict)


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
    ) -> None:
        self._retriever = retriever
        self.pool = pool
        self.config = config
        self.embedder = embedder
        self.telemetry = telemetry
        self._vec_cache: dict[tuple[str, str], np.ndarray] = {}
        self._contact: dict[int, str | None] = {}
        self._prompt_format: str | None = None

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
            except (RuntimeError, OSError, TimeoutError, ValueError) as error:
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
            result = await self._answer(question, list(history)[-self.config.history_window :], trace, on_position)
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
        )
        if self.telemetry is not None:
            record = answer.as_json()
            record["ts"] = time.time()
            await self._run(self.telemetry.write, record)
        return answer

    # -- the steps -------------------------------------------------------------------------------------------------
    async def _answer(
        self,
        question: str,
        history: list[Any],
        trace: Trace,
        on_position: Callable[[int], Awaitable[None]] | None,
    ) -> dict[str, Any]:
        cfg = self.config
        lat = trace.latency_ms

        def timed(stage: str, since: float) -> None:
            lat[stage] = round(lat.get(stage, 0.0) + (time.perf_counter() - since) * 1000, 1)

        def abstain(reason: str, confidence: float, iterations: int, contact: str | None, related: Sequence[str]) -> dict:
            trace.add("final", stop_reason=reason, abstained=True)
            return {
                "answer": abstain_text(contact, related),
                "abstained": True,
                "sources": (),
                "confidence": confidence,
                "iterations": iterations,
                "stop_reason": reason,
            }

        # 0. the question itself is data too: instruction-like sentences are removed
        t = time.perf_counter()
        clean = strip_injection(question)
        if clean != question.strip():
            trace.add("sanitize", removed=True, kept=clean)
        if not clean or not any(ch.isalnum() for ch in clean):
            return abstain(StopReason.ABSTAIN_EMPTY_QUERY, 0.0, 0, None, ())

        # 1. follow-up rewrite from the conversation window
        follow = rewrite_followup(clean, history)
        query = follow.query
        trace.add("rewrite", followup=follow.rewritten, query=query)
        timed("rewrite", t)

        index = await self._run(self._retriever)  # IndexManager.current() may reload from disk
        if index is None:
            return abstain(StopReason.ABSTAIN_NO_INDEX, 0.0, 0, None, ())

        # 2. structured facts
        facts = getattr(index, "facts", None)
        if cfg.facts_lookup and facts is not None and hasattr(facts, "lookup"):
            t = time.perf_counter()
            try:
                found = await self._run(facts.lookup, strip_clitics(query))
            except Exception:
                logger.warning("facts lookup failed", exc_info=True)
                found = None
            timed("facts", t)
            rows = list(getattr(found, "rows", ()) or ()) if found else []
            constraints = dict(getattr(found, "constraints", {}) or {}) if found else {}
            if facts_usable(constraints, rows, query):
                return await self._facts_answer(index, query, found, trace)
            if rows:
                trace.add("facts", skipped="name_only", constraints=constraints)

        # 3. retrieve, then refine when the retrieval confidence is below the bypass threshold
        t = time.perf_counter()
        result = await self._search(index, query, cfg.top_k)
        timed("retrieve", t)
        trace.add("retrieve", query=query, confidence=round(result.confidence, 4), hits=_hits_json(result.hits))
        confidence = float(result.confidence)
        if confidence < cfg.rq_bypass_confidence:
            t = time.perf_counter()
            result, query = await self._refine(index, query, result, follow.rewritten, trace)
            confidence = float(result.confidence)
            timed("refine", t)
        else:
            trace.add("refine", skipped="bypass", confidence=round(confidence, 4))

        contact = await self._contact_url(index)
        hits = list(result.hits)[: cfg.context_max_docs]
        related = _related(hits)
        if not hits:
            return abstain(StopReason.ABSTAIN_LOW_RETRIEVAL, confidence, 0, contact, ())

        anchor_stems = list(dict.fromkeys(stems(clean if not follow.rewritten else follow.query)))
        if not anchor_stems:  # no content word to check evidence against (another script, only stop words)
            trace.add("gate", decision="abstain", anchors=[])
            return abstain(StopReason.ABSTAIN_LOW_RETRIEVAL, confidence, 0, contact, related)
        t = time.perf_counter()
        anchor_text = clean if not follow.rewritten else follow.query
        kind = None if is_list_question(clean) else expected_type(clean)
        corpus_w = await self._run(corpus_weights, index, anchor_text)
        if follow.rewritten:
            # a follow-up asks about its own words; the carried-over topic only narrows the search
            own = set(stems(clean))
            base = corpus_w or {a: 1.0 for a in anchor_stems}
            corpus_w = {a: w * (1.5 if a in own else 0.5) for a, w in base.items()}
        q_vec = (await self._embed([query], "query"))[0]
        ev = await self._evidence(hits, anchor_stems, q_vec, corpus_w, kind)
        timed("evidence", t)
        best_cov = max(ev.coverage_chunk.values(), default=0.0)
        top_sim = float(np.max(ev.vectors @ q_vec)) if ev.vectors is not None and len(ev.vectors) else 0.0
        trace.add("gate", anchors=anchor_stems, coverage=round(best_cov, 3), top_sentence_similarity=round(top_sim, 4))

        # 4–5. generate with entropy; DRAGIN: uncertain or missing anchors → re-refine + gap retrieval, ≤ N rounds
        fmt = await self._prompt_fmt()
        iterations = 0
        gen: Generation | None = None
        span: str | None = None
        conf_dragin = 0.0
        llm_error = None
        last_context: list[str] = []
        while True:
            if best_cov < cfg.anchor_coverage_min and iterations == 0 and cfg.dragin_max_iterations > 0:
                # seed 002: a missing anchor → one anchor-constrained retrieval before anything else
                missing = [a for a in anchor_stems if not any(a in s for s in ev.hit_stems.values())]
                if missing:
                    grown = await self._gap_round(index, f"{query} {' '.join(missing)}", ev, hits, anchor_stems, q_vec, trace, "anchor")
                    if grown:
                        hits = grown
                        ev = await self._evidence(hits, anchor_stems, q_vec, corpus_w, kind)
                        best_cov = max(ev.coverage_chunk.values(), default=0.0)
                        top_sim = float(np.max(ev.vectors @ q_vec)) if ev.vectors is not None and len(ev.vectors) else 0.0
            if best_cov < cfg.anchor_coverage_min or top_sim < cfg.min_top_similarity:
                trace.add("gate", decision="abstain", coverage=round(best_cov, 3), top_sentence_similarity=round(top_sim, 4))
                return abstain(StopReason.ABSTAIN_LOW_RETRIEVAL, confidence, iterations, contact, related)

            context = self._llm_context(ev)
            if gen is not None and [c.text for c in context] == last_context:
                trace.add("dragin", iteration=iterations, decision="same_context")  # same prompt, same output
                break
            last_context = [c.text for c in context]
            prompt = build_prompt(fmt, clean if not follow.rewritten else query, [s.text for s in context])
            t = time.perf_counter()
            try:
                gen = await self.pool.submit(
                    prompt, max_tokens=cfg.max_tokens, stop=COMPLETION_STOPS if fmt == "completion" else (),
                    on_position=on_position,
                )
            except (TimeoutError, RuntimeError, OSError, ValueError) as error:
                llm_error = f"{type(error).__name__}: {error}"
                logger.warning("generation failed, answering extractively: %s", llm_error)
                trace.add("generate", error=llm_error)
                timed("generate", t)
                gen = None
                break
            timed("generate", t)
            conf_dragin = dragin_confidence(gen.entropies)
            span = await self._accept_span(gen.text, ev, clean, fmt, trace)
            trace.add(
                "generate",
                iteration=iterations,
                text=gen.text,
                entropies=[round(e, 4) for e in gen.entropies],
                mean_entropy=round(mean_entropy(gen.entropies), 4),
                conf_dragin=round(conf_dragin, 4),
                prompt_tokens=gen.prompt_tokens,
                completion_tokens=gen.completion_tokens,
                accepted_span=span,
            )
            if conf_dragin >= cfg.dragin_threshold or iterations >= cfg.dragin_max_iterations:
                break
            # DRAGIN: re-refine with the draft (or a HyDE passage on the second round), retrieve the gap, regenerate
            iterations += 1
            t = time.perf_counter()
            gap_query = await self._gap_query(fmt, query, gen, iterations, trace)
            grown = await self._gap_round(index, gap_query, ev, hits, anchor_stems, q_vec, trace, f"dragin{iterations}")
            timed("dragin", t)
            if not grown:
                trace.add("dragin", iteration=iterations, decision="no_new_hits")
                break
            hits = grown
            ev = await self._evidence(hits, anchor_stems, q_vec, corpus_w, kind)
            best_cov = max(ev.coverage_chunk.values(), default=0.0)
            top_sim = float(np.max(ev.vectors @ q_vec)) if ev.vectors is not None and len(ev.vectors) else 0.0

        # 6–7. compose from evidence: the accepted span with its sentence, or the extractive fallback
        trace.add("context", chunk_ids=[h.chunk_id for h in hits])
        t = time.perf_counter()
        list_q = is_list_question(clean)
        chosen = self._choose_list(ev) if list_q and ev.sentences and max(ev.scores) >= 0 else self._choose_sentences(ev, span)
        if list_q:
            span = None  # a list answer is the page's own lines
        timed("compose", t)
        if not chosen:
            return abstain(StopReason.ABSTAIN_UNSUPPORTED, confidence, iterations, contact, related)
        top = chosen[0]
        cov_chunk = ev.coverage_chunk.get(top.chunk_id, 0.0)
        weights = ev.weights or idf_weights(anchor_stems, list(ev.hit_stems.values()))
        cov_sentence = anchor_coverage(anchor_stems, text_stems(top.text), weights)
        trace.add("support", sentence=top.text, coverage_chunk=round(cov_chunk, 3), coverage_sentence=round(cov_sentence, 3))
        if cov_chunk < cfg.anchor_coverage_min or cov_sentence < cfg.sentence_coverage_min:
            return abstain(StopReason.ABSTAIN_UNSUPPORTED, confidence, iterations, contact, related)
        # numbers and years in the question ("SEA Games 2019", "semester 5") must be in the cited chunk
        numbers = {a for a in anchor_stems if any(ch.isdigit() for ch in a)}
        if numbers and not numbers <= ev.hit_stems.get(top.chunk_id, set()):
            trace.add("support", decision="abstain", missing_numbers=sorted(numbers - ev.hit_stems.get(top.chunk_id, set())))
            return abstain(StopReason.ABSTAIN_UNSUPPORTED, confidence, iterations, contact, related)
        if not list_q and not type_ok(kind, " ".join([span or ""] + [display(c) for c in chosen])):
            trace.add("answer_type", expected=kind, decision="abstain")
            return abstain(StopReason.ABSTAIN_UNSUPPORTED, confidence, iterations, contact, related)
        lead = span if span and chosen and normalize(span) in normalize(chosen[0].text) else None
        text, sources = compose_answer(lead, chosen, as_list=list_q)
        if len(text) > cfg.max_answer_chars:
            text, sources = compose_answer(span, chosen[:1])
        if is_template_leak(text) or not any(ch.isalnum() for ch in text):
            # evidence is neutralised, so this should not happen; but no template text may ever reach a student
            trace.add("final_guard", reason="template_leak")
            return abstain(StopReason.ABSTAIN_UNSUPPORTED, confidence, iterations, contact, related)
        if span is None:
            reason = StopReason.FALLBACK_EXTRACTIVE
        elif conf_dragin >= cfg.dragin_threshold:
            reason = StopReason.STOP_CONFIDENT
        else:
            reason = StopReason.STOP_MAX_ITER
        final_conf = round(min(1.0, 0.5 * cov_chunk + 0.25 * max(confidence, 0.0) + 0.25 * conf_dragin), 4)
        trace.add("final", stop_reason=reason, abstained=False, sources=[s.url for s in sources])
        return {
            "answer": text,
            "abstained": False,
            "sources": sources,
            "confidence": final_conf,
            "iterations": iterations,
            "stop_reason": reason,
        }

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
    ) -> _Evidence:
        ev = _Evidence(hits=list(hits))
        ev.sentences = split_evidence(hits, max_sentences=60)
        for h in hits:
            ev.hit_stems[h.chunk_id] = text_stems(f"{h.title} {h.text}")
        weights = corpus_w or idf_weights(anchor_stems, list(ev.hit_stems.values()))
        ev.weights = weights
        ev.coverage_chunk = {cid: anchor_coverage(anchor_stems, s, weights) for cid, s in ev.hit_stems.items()}
        if not ev.sentences:
            ev.vectors = np.zeros((0, 1), dtype=np.float32)
            return ev
        ev.vectors = await self._embed([s.text for s in ev.sentences], "passage")
        sims = ev.vectors @ q_vec
        sent_stems = [text_stems(s.text) for s in ev.sentences]
        sent_weights = corpus_w or idf_weights(anchor_stems, sent_stems)
        for i, s in enumerate(ev.sentences):
            lex = anchor_coverage(anchor_stems, sent_stems[i], sent_weights)
            emb = min(max((float(sims[i]) - 0.7) / 0.25, 0.0), 1.0)
            chunk_cov = ev.coverage_chunk.get(s.chunk_id, 0.0)
            # headings say little on their own; a "Label: value" line (Telepon: (0341) 558933) is a fact
            short = 0.3 if len(words(s.text)) < 4 and ":" not in s.text else 0.0
            # a sentence from a chunk that misses the question's anchors cannot be the cited answer
            off_topic = 0.5 if chunk_cov < self.config.anchor_coverage_min else 0.0
            # seed 002's finalizer idea: a "berapa"/"kapan"/"siapa" question wants a sentence that can carry a
            # number, a time or a name (display() adds the page title to "Label: value" lines)
            off_topic += 0.25 if kind is not None and not type_ok(kind, display(s)) else 0.0
            ev.scores.append(0.55 * lex + 0.35 * emb + 0.10 * chunk_cov - 0.01 * s.hit_rank - short - off_topic)
        # a question on the page (an FAQ entry) is not an answer; the sentence after it usually is
        for i, s in enumerate(ev.sentences):
            if s.text.rstrip().endswith("?"):
                nxt = i + 1
                if nxt < len(ev.sentences) and ev.sentences[nxt].chunk_id == s.chunk_id:
                    ev.scores[nxt] = max(ev.scores[nxt], ev.scores[i] - 0.02)
                ev.scores[i] = -1.0
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
        if len(norm.split()) <= 25:
            # the span must sit in one of the strongest sentences, not in any sentence of the context
            # the span must sit in one of the strongest sentences: a small model often copies a wrong date or
            # number from a weaker sentence, and then the best sentence (extractive) is the better answer
            top = max(ev.scores, default=0.0)
            strong = [s for s, sc in zip(ev.sentences, ev.scores, strict=True) if sc >= SPAN_SENTENCE_MIN * top]
            if any(norm and norm in normalize(s.text) for s in strong):
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
        joined = " ".join(kept).strip().rstrip(".")
        return joined if len(joined) <= 300 else None

    def _choose_list(self, ev: _Evidence) -> list[EvidenceSentence]:
        """A list question: the best sentence and the lines that follow it in the same chunk (the items)."""
        order = sorted(range(len(ev.sentences)), key=lambda i: -ev.scores[i])
        best = order[0]
        chosen = [ev.sentences[best]]
        used = len(chosen[0].text)
        for s in ev.sentences[best + 1 :]:
            if s.chunk_id != chosen[0].chunk_id or len(chosen) >= 8 or s.text.rstrip().endswith("?"):
                break
            if used + len(s.text) > self.config.max_answer_chars:
                break
            chosen.append(s)
            used += len(s.text)
        return chosen

    def _choose_sentences(self, ev: _Evidence, span: str | None) -> list[EvidenceSentence]:
        """The sentence(s) to show: the best-scoring one containing the span, or the best 1–2 (extractive)."""
        if not ev.sentences or max(ev.scores) < 0:
            return []
        order = sorted(range(len(ev.sentences)), key=lambda i: -ev.scores[i])
        if span:
            norm = normalize(span)
            top_score = ev.scores[order[0]]
            containing = [i for i in order if norm and norm in normalize(ev.sentences[i].text)
                          and ev.scores[i] >= SPAN_SENTENCE_MIN * top_score]
            if containing:
                if containing[0] == order[0]:
                    return [ev.sentences[order[0]]]
                # the model chose a near-best sentence: show the best one first, then the model's
                return [ev.sentences[order[0]], ev.sentences[containing[0]]]
            span_stems = set(stems(span))
            eligible = [i for i in order if ev.scores[i] >= max(0.0, SPAN_SENTENCE_MIN * top_score)]
            if span_stems and eligible:
                best = max(eligible, key=lambda i: (len(span_stems & set(stems(ev.sentences[i].text))), ev.scores[i]))
                if len(span_stems & set(stems(ev.sentences[best].text))) / len(span_stems) >= self.config.support_tau:
                    return [ev.sentences[best]]
        top = ev.scores[order[0]]
        chosen = [order[0]]
        for i in order[1:]:
            if len(chosen) >= 2:
                break
            if ev.scores[i] >= 0.9 * top and ev.sentences[i].chunk_id == ev.sentences[order[0]].chunk_id:
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
            except (TimeoutError, RuntimeError, OSError, ValueError) as error:
                trace.add("hyde", error=str(error))
        draft = gen.text if not check_degenerate(gen.text).degenerate else ""
        return f"{query} {draft}".strip()

    async def _gap_round(
        self, index: Any, gap_query: str, ev: _Evidence, hits: list[Any], anchor_stems: list[str], q_vec: np.ndarray,
        trace: Trace, label: str,
    ) -> list[Any] | None:
        """Retrieve with the gap query; return the merged hit list when it brought new chunks (novelty), else None."""
        res = await self._search(index, gap_query, self.config.top_k)
        known = {h.chunk_id for h in hits}
        new = [h for h in res.hits if h.chunk_id not in known]
        trace.add("gap_retrieve", round=label, query=gap_query, new_hits=_hits_json(new))
        if not new:
            return None
        return hits + new[: self.config.context_max_docs]


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

