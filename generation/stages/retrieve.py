"""Hybrid retrieval, the RQ-RAG refinement below the bypass confidence, and the gap round that DRAGIN and a missing
anchor share (docs/answers.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from generation.config import StopReason
from generation.refine import expand_query, validate_refinement
from generation.stages.base import Abstain, StageContext, Turn, hits_json
from generation.text import normalize
from generation.types import Trace
from retrieval.types import Hit, SearchResult

if TYPE_CHECKING:
    from retrieval.search import SearchIndex

__all__ = ["RetrieveStage", "gap_round"]


class RetrieveStage:
    """Hybrid retrieval; below the bypass confidence, the refinement with its validators (docs/answers.md)."""

    name = "retrieve"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx

    async def run(self, turn: Turn) -> str | Abstain:
        cfg = self.ctx.config
        assert turn.index is not None  # the rewrite stage abstains without one
        result = await self.ctx.search(turn.index, turn.query, cfg.top_k)
        turn.trace.add("retrieve", query=turn.query, confidence=round(result.confidence, 4), hits=hits_json(result.hits))
        decision = "bypass"
        if float(result.confidence) < cfg.rq_bypass_confidence:
            result, turn.query = await self._refine(turn.index, turn.query, result, turn.followup, turn.trace)
            decision = "refined"
        else:
            turn.trace.add("refine", skipped="bypass", confidence=round(float(result.confidence), 4))
        turn.confidence = float(result.confidence)
        turn.contact = await self.ctx.contact_url(turn.index)
        turn.hits = list(result.hits)[: cfg.context_max_docs]
        turn.related = _related(turn.hits)
        if not turn.hits:
            return Abstain(StopReason.ABSTAIN_LOW_RETRIEVAL)
        return decision

    async def _refine(self, index: SearchIndex, query: str, result: SearchResult, followup: bool,
                      trace: Trace) -> tuple[SearchResult, str]:
        cfg = self.ctx.config
        candidate = expand_query(query)
        if normalize(candidate) == normalize(query):
            trace.add("refine", candidate=candidate, decision="unchanged")
            return result, query
        vecs = await self.ctx.embed([query, candidate], "query")
        cosine = float(vecs[0] @ vecs[1])
        cand_result = await self.ctx.search(index, candidate, cfg.top_k)
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
                  hits=hits_json(cand_result.hits) if v.accepted else None)
        if v.accepted:
            return cand_result, candidate
        return result, query


async def gap_round(ctx: StageContext, index: SearchIndex | None, gap_query: str, hits: list[Hit], trace: Trace,
                    label: str) -> list[Hit] | None:
    """Retrieve with the gap query; return the merged hit list when it brought new chunks (novelty), else None."""
    assert index is not None  # the rewrite stage abstains without one
    res = await ctx.search(index, gap_query, ctx.config.top_k)
    known = {h.chunk_id for h in hits}
    new = [h for h in res.hits if h.chunk_id not in known]
    trace.add("gap_retrieve", round=label, query=gap_query, new_hits=hits_json(new))
    if not new:
        return None
    return hits + new[: ctx.config.context_max_docs]


def _top_distance(hits: Sequence[Hit]) -> float | None:
    ds = [d for d in (getattr(h, "distance", None) for h in hits) if d is not None]
    return min(ds) if ds else None


def _related(hits: Sequence[Hit]) -> list[str]:
    seen: dict[str, None] = {}
    for h in hits:
        if h.title:
            seen.setdefault(h.title, None)
    return list(seen)[:3]
