"""The answer pipeline: a follow-up's subject, then the stages in order, each a small class in ``generation.stages``
(docs/architecture.md, "The answer pipeline"):

- both answerers: rewrite → facts → retrieve (with the RQ-RAG refinement);
- ``ANSWERER=reader``: read (the learned reader and its gate) → finalize (the page quoted around the span);
- ``ANSWERER=rules``: evidence → generate (the LLM with entropy, DRAGIN rounds) → compose → gate → finalize.

The first stage that settles the reply ends the turn; any stage may return ``Abstain``, which becomes the refusal
here, once. The trace records each stage's name, duration and decision. The small base model is never trusted on
its own: the reply text always comes from the evidence (docs/answers.md, "Where the ideas come from").
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from generation.calibration import DEFAULT_MODEL_PATH, Calibrator
from generation.compose import abstain_text, combine_parts
from generation.config import ABSTENTION_MODES, ANSWERERS, LLM_ERRORS, PipelineConfig, StopReason
from generation.pool import LLMPool
from generation.stages import (
    Abstain,
    ComposeStage,
    EvidenceStage,
    FactsStage,
    FinalizeStage,
    GateStage,
    GenerateStage,
    QuoteStage,
    ReadStage,
    RestOfListStage,
    RetrieveStage,
    RewriteStage,
    Stage,
    StageContext,
    Subject,
    SubjectResolver,
    Turn,
)
from generation.stages.evidence import EVIDENCE_COMPONENTS, EVIDENCE_WEIGHTS
from generation.subjects import ask_back_text
from generation.support import EvidenceSentence
from generation.telemetry import TelemetryWriter
from generation.text import attach_clitics, names_subject, split_questions, strip_citations
from generation.types import Answer, Reply, Source, Trace
from retrieval.types import Embedder

if TYPE_CHECKING:
    from generation.reader import Reader
    from retrieval.search import SearchIndex

__all__ = ["ABSTENTION_MODES", "ANSWERERS", "EVIDENCE_COMPONENTS", "EVIDENCE_WEIGHTS", "LLM_ERRORS", "AnswerPipeline",
           "PipelineConfig", "StopReason"]

logger = logging.getLogger(__name__)


class AnswerPipeline:
    """Turns a question (and the conversation window) into an ``Answer``. Async; every blocking step runs in an
    executor or in the LLM pool. The stages share one :class:`~generation.stages.StageContext` (retrieval,
    embeddings, the pool, the reader, the abstention model)."""

    def __init__(
        self,
        retriever: Callable[[], SearchIndex | None],
        pool: LLMPool,
        config: PipelineConfig,
        embedder: Embedder,
        telemetry: TelemetryWriter | None = None,
        calibrator: Calibrator | None = None,
        reader: Reader | None = None,
    ) -> None:
        # the abstention model; the bundled one unless a site refitted its own (python -m bot calibrate)
        self.ctx = StageContext(retriever, pool, config, embedder,
                                calibrator if calibrator is not None else _default_calibrator(), reader,
                                dict(EVIDENCE_WEIGHTS))
        self.telemetry = telemetry
        self.subjects = SubjectResolver(self.ctx)
        ctx = self.ctx
        self.shared_stages: tuple[Stage, ...] = (RewriteStage(ctx), FactsStage(ctx), RetrieveStage(ctx))
        self.reader_stages: tuple[Stage, ...] = (RestOfListStage(ctx), ReadStage(ctx), QuoteStage(ctx))
        self.rules_stages: tuple[Stage, ...] = (EvidenceStage(ctx), GenerateStage(ctx), ComposeStage(ctx),
                                                GateStage(ctx), FinalizeStage(ctx))

    # the context's members, as callers (bot.wiring, bench) know them
    @property
    def config(self) -> PipelineConfig:
        return self.ctx.config

    @config.setter
    def config(self, value: PipelineConfig) -> None:
        self.ctx.config = value

    @property
    def calibrator(self) -> Calibrator | None:
        return self.ctx.calibrator

    @calibrator.setter
    def calibrator(self, value: Calibrator | None) -> None:
        self.ctx.calibrator = value

    @property
    def pool(self) -> LLMPool:
        return self.ctx.pool

    @property
    def embedder(self) -> Embedder:
        return self.ctx.embedder

    @property
    def evidence_weights(self) -> dict[str, float]:
        return self.ctx.evidence_weights

    @property
    def abstention_mode(self) -> str:
        """The gate in force: "calibrated" needs a model; without one the hand thresholds decide."""
        return self.ctx.abstention_mode

    @property
    def reader(self) -> Reader:
        """The learned reader (loaded once, on first use: it dequantises the base model's lower layers)."""
        return self.ctx.reader

    def add_stage(self, stage: Stage, *, before: str) -> None:
        """Insert ``stage`` before the stage named ``before`` (in the shared stages, or in each answerer's that has
        it): a new step of the answer needs one file and this call, no edit of the pipeline."""
        found = False
        for attr in ("shared_stages", "reader_stages", "rules_stages"):
            stages: tuple[Stage, ...] = getattr(self, attr)
            names = [s.name for s in stages]
            if before in names:
                k = names.index(before)
                setattr(self, attr, (*stages[:k], stage, *stages[k:]))
                found = True
        if not found:
            raise ValueError(f"no stage named {before!r}; the stages are "
                             f"{', '.join(dict.fromkeys(s.name for s in self.shared_stages + self.reader_stages + self.rules_stages))}")

    def stages(self) -> tuple[Stage, ...]:
        """The stages a question runs through with the configured answerer, in order."""
        answerer = self.reader_stages if self.config.answerer == "reader" else self.rules_stages
        return self.shared_stages + answerer

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
        question = attach_clitics(question)
        try:
            window = list(history)[-self.config.history_window :]
            subject = await self.subjects.resolve(question, window, trace) if self.config.follow_subjects else None
            if subject is not None and subject.standalone:  # it only looked like a follow-up: no window
                subject, window, history = None, [], ()
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
        answer = Answer(answer=result.answer, abstained=result.abstained, sources=result.sources,
                        confidence=result.confidence, iterations=result.iterations, stop_reason=result.stop_reason,
                        latency_ms=total, trace=trace, highlights=tuple(result.highlights),
                        choices=tuple(result.choices))
        if self.telemetry is not None:
            record = answer.as_json()
            record["ts"] = time.time()
            await self.ctx.run(self.telemetry.write, record)
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
        turn = Turn(question=question, history=list(history)[-self.config.history_window :],
                    trace=Trace(trace_id=uuid.uuid4().hex[:16], query=question), on_position=None)
        for stage in (*self.shared_stages, *self.rules_stages):
            outcome = await stage.run(turn)
            if isinstance(outcome, Abstain) or turn.result is not None:
                return [], [], []
            if stage.name == "evidence":  # scored; nothing after it (no generation) is wanted
                break
        return list(turn.ev.sentences), list(turn.ev.components), list(turn.ev.scores)

    # -- a follow-up's subject, several questions in one message ----------------------------------------------------
    async def _answer_subject(self, subject: Subject, trace: Trace,
                              on_position: Callable[[int], Awaitable[None]] | None) -> Reply:
        """The reply once the subject is known: the question about it (each one chosen), with no history (the
        query now stands alone), or the ask-back itself (neither an answer nor a refusal)."""
        if subject.result is not None:
            return subject.result
        if subject.ask:
            same = await self._same_for_all(subject, trace)
            if same is not None:
                return same
            trace.add("final", stop_reason=StopReason.ASK_BACK, abstained=False,
                      choices=[e.name for e in subject.ask])
            return Reply(answer=ask_back_text(subject.asked, subject.ask), abstained=False, sources=(),
                         confidence=0.0, iterations=0, stop_reason=StopReason.ASK_BACK,
                         choices=tuple(e.name for e in subject.ask))
        if len(subject.queries) > 1:
            result = await self._answer_parts(subject.queries, [], trace, on_position, labels=subject.labels)
        else:
            result = await self._answer(subject.queries[0], [], trace, on_position)
        if subject.note and not result.abstained:
            result = dataclasses.replace(result, answer=f"{subject.note}\n{result.answer}")
        return result

    async def _same_for_all(self, subject: Subject, trace: Trace) -> Reply | None:
        """An ambiguous follow-up whose every reading gets the same answer ("jam pelayanannya?" after three
        laboratories whose pages give the same hours) needs no ask-back: the answer once, naming every candidate and
        citing each page. None when a reading is refused or the answers differ (the ask-back stands)."""
        if len(subject.queries) != len(subject.ask):
            return None
        replies: list[Reply] = []
        for entity, query in zip(subject.ask, subject.queries, strict=True):
            trace.add("ask_back_probe", candidate=entity.name, question=query)
            reply = await self._answer(query, [], trace, None)
            if reply.abstained or reply.stop_reason == StopReason.ASK_BACK:
                return None
            replies.append(reply)
        said = {" ".join(strip_citations(r.answer).split()) for r in replies}
        if len(said) != 1:
            trace.add("ask_back_probe", decision="differ")
            return None
        sources: list[Source] = []
        for source in (s for r in replies for s in r.sources):
            if source not in sources:
                sources.append(source)
        names = [e.name for e in subject.ask]
        who = ", ".join(names[:-1]) + f" dan {names[-1]}"
        marks = "".join(f"[{k}]" for k in range(1, len(sources) + 1))
        trace.add("ask_back_probe", decision="same")
        trace.add("final", stop_reason=replies[0].stop_reason, abstained=False, sources=[s.url for s in sources])
        return dataclasses.replace(replies[0], answer=f"{who} — {said.pop()} {marks}", sources=tuple(sources),
                                   confidence=min(float(r.confidence) for r in replies))

    async def _answer_parts(
        self,
        parts: Sequence[str],
        history: list[Any],
        trace: Trace,
        on_position: Callable[[int], Awaitable[None]] | None,
        *,
        labels: Sequence[str] = (),
    ) -> Reply:
        """A message of several questions (generation.text.split_questions): each part answered in turn with the
        parts before it and their replies as history, so "pelatihnya siapa" follows "ada klub catur?" as a
        follow-up would; then one reply (compose.combine_parts). ``labels`` (one per part: what it is about) go
        before an answer that does not name its subject ("Laboratorium X — Lokasi: …")."""
        from storage.models import Message

        done: list[tuple[str, Reply]] = []
        for k, part in enumerate(parts):
            trace.add("part", index=k + 1, of=len(parts), question=part)
            result = await self._answer(part, history[-self.config.history_window :], trace, on_position if k == 0 else None)
            if k < len(labels) and not result.abstained and not names_subject(result.answer, labels[k]):
                result = dataclasses.replace(result, answer=f"{labels[k]} — {result.answer}")
            done.append((part, result))
            history = [*history, Message(role="user", text=part), Message(role="assistant", text=result.answer)]
        return combine_parts(done)

    # -- the stages ------------------------------------------------------------------------------------------------
    async def _answer(
        self,
        question: str,
        history: list[Any],
        trace: Trace,
        on_position: Callable[[int], Awaitable[None]] | None,
    ) -> Reply:
        """Run the stages in order; the first one that settles the reply ends the turn. The trace records each
        stage's name, duration and decision (``trace.stages``)."""
        turn = Turn(question=question, history=history, trace=trace, on_position=on_position)
        for stage in self.stages():
            started = time.perf_counter()
            outcome = await stage.run(turn)
            decision = self._abstain(turn, outcome.reason) if isinstance(outcome, Abstain) else outcome
            ms = round((time.perf_counter() - started) * 1000, 1)
            trace.latency_ms[stage.name] = round(trace.latency_ms.get(stage.name, 0.0) + ms, 1)
            trace.stages.append({"name": stage.name, "ms": ms, "decision": decision})
            if turn.result is not None:
                return turn.result
        raise AssertionError("the finalize stage always settles the reply")  # pragma: no cover

    @staticmethod
    def _abstain(turn: Turn, reason: str) -> str:
        """The refusal, written once for every stage that returns ``Abstain``."""
        turn.trace.add("final", stop_reason=reason, abstained=True)
        turn.result = Reply(answer=abstain_text(turn.contact, turn.related), abstained=True, sources=(),
                            confidence=turn.confidence, iterations=turn.iterations, stop_reason=reason)
        return f"abstain:{reason}"


@functools.lru_cache(maxsize=1)
def _default_calibrator() -> Calibrator | None:
    try:
        return Calibrator.load(DEFAULT_MODEL_PATH)
    except ValueError as error:  # not fitted yet, or unreadable: the hand thresholds decide
        logger.warning("%s; falling back to the hand thresholds", error)
        return None
