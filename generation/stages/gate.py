"""The rules answerer's gate: the calibrated abstention model over the pipeline's signals (``features``), the hand
thresholds, or nothing (an ablation)."""

from __future__ import annotations

from generation.config import StopReason
from generation.stages.base import Abstain, StageContext, Turn
from generation.support import is_number_anchor
from generation.text import normalize

__all__ = ["GateStage", "features"]


class GateStage:
    """Answer or abstain: the calibrated model (default), the hand thresholds, or nothing (an ablation)."""

    name = "gate"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx

    async def run(self, turn: Turn) -> str | Abstain:
        cfg = self.ctx.config
        feats = features(turn)
        turn.trace.add("features", **{k: None if v is None else round(v, 4) for k, v in feats.items()})
        if self.ctx.abstention_mode == "off":
            return "off"
        # the model was fitted on replies where the LLM ran; without its signals (LLM failed or off) it is outside
        # what it was fitted on, and the hand thresholds decide, as when there is no model at all
        if self.ctx.abstention_mode == "calibrated" and self.ctx.calibrator is not None and turn.gen is not None:
            p = self.ctx.calibrator.probability(feats)
            turn.p_correct = p
            answer = p >= self.ctx.calibrator.threshold
            turn.trace.add("calibrated_gate", p=round(p, 4), threshold=round(self.ctx.calibrator.threshold, 4),
                           decision="answer" if answer else "abstain")
            if not answer:
                # the stop reason only names the likelier cause (evidence missing the question's words, or not)
                reason = StopReason.ABSTAIN_LOW_RETRIEVAL if (feats["anchor_coverage"] or 0.0) < 0.5 else StopReason.ABSTAIN_UNSUPPORTED
                return Abstain(reason)
            return f"answer p={p:.2f}"
        if turn.cov_chunk < cfg.anchor_coverage_min or turn.cov_sentence < cfg.sentence_coverage_min:
            return Abstain(StopReason.ABSTAIN_UNSUPPORTED)
        if not turn.numbers_ok:  # numbers and years in the question ("semester 5") must be in the cited chunk
            turn.trace.add("support", decision="abstain", missing_numbers=[a for a in turn.missing if is_number_anchor(a)])
            return Abstain(StopReason.ABSTAIN_UNSUPPORTED)
        if not turn.type_ok:
            turn.trace.add("answer_type", expected=turn.kind, decision="abstain")
            return Abstain(StopReason.ABSTAIN_UNSUPPORTED)
        return "answer"


def features(turn: Turn) -> dict[str, float | None]:
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
