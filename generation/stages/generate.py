"""The rules answerer's generation: the LLM reads the best evidence sentences and its span is kept only when the
evidence contains it; an uncertain draft (DRAGIN, per-token entropy) re-retrieves the gap, at most N rounds."""

from __future__ import annotations

from generation.config import LLM_ERRORS, PipelineConfig, StopReason
from generation.entropy import dragin_confidence, mean_entropy
from generation.guards import check_degenerate
from generation.prompts import COMPLETION_STOPS, build_hyde_prompt, build_prompt, template_text
from generation.stages.base import Abstain, Evidence, StageContext, Turn, logger
from generation.stages.evidence import low_evidence, refresh_evidence
from generation.stages.retrieve import gap_round
from generation.support import EvidenceSentence, check_support, stems
from generation.text import normalize, sentences, words
from generation.types import Generation, Trace

__all__ = ["SPAN_SENTENCE_MIN", "GenerateStage", "accept_span", "llm_context"]

SPAN_SENTENCE_MIN = 0.85  # a model span is kept only inside a sentence scoring ≥ this share of the best one


class GenerateStage:
    """Generate with per-token entropy; DRAGIN: an uncertain draft re-retrieves the gap, at most N rounds."""

    name = "generate"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx

    async def run(self, turn: Turn) -> str | Abstain:
        cfg = self.ctx.config
        if not cfg.use_llm:
            turn.trace.add("generate", skipped="use_llm=false")
            return "off"
        fmt = await self.ctx.prompt_format()
        last_context: list[str] = []
        decision = "confident"
        while True:
            context = llm_context(cfg, turn.ev)
            if turn.gen is not None and [c.text for c in context] == last_context:
                turn.trace.add("dragin", iteration=turn.iterations, decision="same_context")  # same prompt, same output
                break
            last_context = [c.text for c in context]
            prompt = build_prompt(fmt, turn.anchor_text, [s.text for s in context])
            try:
                turn.gen = await self.ctx.pool.submit(
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
            turn.span = await accept_span(self.ctx, turn.gen.text, turn.ev, turn.normalized, fmt, turn.trace)
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
            grown = await gap_round(self.ctx, turn.index, gap_query, turn.hits, turn.trace, f"dragin{turn.iterations}")
            if not grown:
                turn.trace.add("dragin", iteration=turn.iterations, decision="no_new_hits")
                break
            turn.hits = grown
            await refresh_evidence(self.ctx, turn)
            if low_evidence(self.ctx, turn):
                turn.trace.add("gate", decision="abstain", coverage=round(turn.best_cov, 3),
                               top_sentence_similarity=round(turn.top_sim, 4))
                return Abstain(StopReason.ABSTAIN_LOW_RETRIEVAL)
        return decision

    async def _gap_query(self, fmt: str, query: str, gen: Generation, iteration: int, trace: Trace) -> str:
        if self.ctx.config.hyde and iteration == 2:
            try:
                hyde = await self.ctx.pool.submit(build_hyde_prompt(fmt, query), max_tokens=48, stop=("\n",) if fmt == "completion" else ())
                if not check_degenerate(hyde.text).degenerate:
                    trace.add("hyde", passage=hyde.text)
                    return f"{query} {hyde.text}"
            except LLM_ERRORS as error:
                trace.add("hyde", error=str(error))
        draft = gen.text if not check_degenerate(gen.text).degenerate else ""
        return f"{query} {draft}".strip()


def llm_context(cfg: PipelineConfig, ev: Evidence) -> list[EvidenceSentence]:
    """The best sentences within the character budget (and the n_ctx budget), best first."""
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


async def accept_span(ctx: StageContext, text: str, ev: Evidence, question: str, fmt: str, trace: Trace) -> str | None:
    """Accept the model's output only when it is clean and the evidence contains it."""
    cfg = ctx.config
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
    claim_vecs = (await ctx.embed(claims, "passage")) if ev.vectors is not None and len(ev.vectors) else None
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
