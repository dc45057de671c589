"""A small real ``Answerer`` for channel tests: word-overlap search over a few documents, best sentence out.

It stands in for ``generation.pipeline.AnswerPipeline`` where a test is about the channel, not the answer: it
really searches its documents (no canned replies), returns the sentence that best matches the question with its
source, abstains when nothing matches, and records every call so tests can check the history it was given.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from generation.types import Answer, Source, Trace
from storage.models import Message

__all__ = ["ASK_BACK_CHOICES", "ASK_BACK_TEXT", "SAMPLE_DOCS", "AskBackAnswerer", "CorpusAnswerer", "Doc"]

_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = {"apa", "siapa", "yang", "di", "ke", "dan", "itu", "ini", "berapa", "kapan", "adalah", "dari", "untuk"}


@dataclass(frozen=True)
class Doc:
    url: str
    title: str
    text: str


SAMPLE_DOCS = (
    Doc(
        "http://prodi.test/profil/ketua",
        "Ketua Program Studi",
        "Program studi Teknik Informatika dipimpin oleh Dr. Supriyono, M.Kom. sebagai ketua program studi. "
        "Ruang kerja ketua prodi ada di gedung B lantai 2.",
    ),
    Doc(
        "http://prodi.test/kurikulum/basis-data",
        "Mata Kuliah Basis Data",
        "Mata kuliah Basis Data berbobot 3 SKS dan diambil pada semester 3. "
        "Prasyarat mata kuliah ini adalah Algoritma dan Pemrograman.",
    ),
    Doc(
        "http://prodi.test/laboratorium",
        "Laboratorium",
        "Prodi memiliki laboratorium jaringan, laboratorium multimedia, dan laboratorium kecerdasan buatan.",
    ),
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1}


class CorpusAnswerer:
    """Implements the ``Answerer`` protocol over ``docs``. ``delay`` simulates a slow model."""

    def __init__(self, docs: Sequence[Doc] = SAMPLE_DOCS, *, delay: float = 0.0, queue_position: int = 0) -> None:
        self.docs = tuple(docs)
        self.delay = delay
        self.queue_position = queue_position
        self.calls: list[tuple[str, list[Message]]] = []
        self.fail_next = 0
        self.before_answer = None  # optional coroutine function awaited before answering (to hold an answer open)

    async def answer(self, question: str, history: Sequence[Message], *, on_position=None) -> Answer:
        self.calls.append((question, list(history)))
        if self.queue_position and on_position is not None:
            result = on_position(self.queue_position)
            if asyncio.iscoroutine(result):
                await result
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.before_answer is not None:
            await self.before_answer()
        if self.fail_next:
            self.fail_next -= 1
            raise RuntimeError("simulated generation failure")
        trace = Trace(trace_id=uuid.uuid4().hex[:16], query=question)
        wanted = _words(question)
        best: tuple[int, str, Doc] | None = None
        for doc in self.docs:
            for sentence in re.split(r"(?<=[.!?])(?<!Dr\.)\s+(?=[A-Z])", doc.text):
                score = len(wanted & _words(sentence + " " + doc.title))
                if score and (best is None or score > best[0]):
                    best = (score, sentence, doc)
        if best is None:
            trace.add("abstain", reason="no overlap")
            return Answer(
                answer="Mohon maaf, informasi tersebut tidak tersedia di situs prodi.",
                abstained=True,
                sources=(),
                confidence=0.0,
                iterations=1,
                stop_reason="abstain",
                latency_ms=1.0,
                trace=trace,
            )
        score, sentence, doc = best
        trace.add("retrieve", url=doc.url, score=score)
        # the span a reader would mark: here the longest question word the sentence holds, as the sentence spells it
        matched = sorted((w for w in _WORD.findall(sentence) if w.lower() in wanted), key=len, reverse=True)
        return Answer(
            answer=sentence,
            abstained=False,
            sources=(Source(doc.url, doc.title),),
            confidence=min(1.0, score / max(1, len(wanted))),
            iterations=1,
            stop_reason="supported",
            latency_ms=1.0,
            trace=trace,
            highlights=tuple(matched[:1]),
        )


# the two lecturers a reply named, whom "emailnya apa?" can mean
ASK_BACK_CHOICES = ("Dr. Rina Wulandari, M.Kom.", "Budi Santoso, S.T., M.T.")
ASK_BACK_TEXT = "Maksud Anda email dosen yang mana?"


class AskBackAnswerer(CorpusAnswerer):
    """A ``CorpusAnswerer`` that asks back: an ambiguous follow-up (``ambiguous``, e.g. "emailnya apa?") gets an
    ``Answer`` with ``choices``; a question that is exactly one of the choices gets that person's e-mail with a
    source; anything else is the corpus's. Every call is recorded in ``calls`` as before, so a test sees what the
    answerer was asked after a button press."""

    def __init__(self, choices: Sequence[str] = ASK_BACK_CHOICES, *, ambiguous: Sequence[str] = ("emailnya apa?",),
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.choices = tuple(choices)
        self.ambiguous = {a.lower() for a in ambiguous}

    async def answer(self, question: str, history: Sequence[Message], *, on_position=None) -> Answer:
        if question.strip().lower() in self.ambiguous:
            self.calls.append((question, list(history)))
            trace = Trace(trace_id=uuid.uuid4().hex[:16], query=question)
            return Answer(answer=ASK_BACK_TEXT, abstained=False, sources=(), confidence=0.5, iterations=1,
                          stop_reason="ASK_BACK", latency_ms=1.0, trace=trace, choices=self.choices)
        if question in self.choices:
            self.calls.append((question, list(history)))
            trace = Trace(trace_id=uuid.uuid4().hex[:16], query=question)
            user = re.sub(r"[^a-z]", "", question.split(",")[0].split()[-1].lower())
            return Answer(answer=f"Email {question} adalah {user}@prodi.test.", abstained=False,
                          sources=(Source("http://prodi.test/dosen", "Dosen"),), confidence=0.9, iterations=1,
                          stop_reason="supported", latency_ms=1.0, trace=trace)
        return await super().answer(question, history, on_position=on_position)
