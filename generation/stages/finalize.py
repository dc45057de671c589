"""The rules answerer's reply: the direct answer first, then the cited sentence(s); never template text."""

from __future__ import annotations

from generation.compose import compose_answer, whole_date
from generation.config import StopReason
from generation.guards import is_template_leak
from generation.stages.base import Abstain, StageContext, Turn
from generation.text import normalize
from generation.types import Reply

__all__ = ["FinalizeStage"]


class FinalizeStage:
    """The reply: the direct answer first, then the cited sentence(s); never template text."""

    name = "finalize"

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx

    async def run(self, turn: Turn) -> str | Abstain:
        cfg = self.ctx.config
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
            return Abstain(StopReason.ABSTAIN_UNSUPPORTED)
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
        turn.result = Reply(answer=text, abstained=False, sources=sources, confidence=final_conf,
                            iterations=turn.iterations, stop_reason=reason)
        return reason
