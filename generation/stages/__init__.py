"""The answer pipeline's stages, each a small class with ``name`` and ``async run(turn) -> str | Abstain``
(``generation.stages.base``); ``generation.pipeline.AnswerPipeline`` wires them in order.

Both answerers: :class:`RewriteStage`, :class:`FactsStage`, :class:`RetrieveStage`. The learned reader:
:class:`RestOfListStage` ("ada lagi?" over a table), :class:`ReadStage`, :class:`QuoteStage`. The rules answerer: :class:`EvidenceStage`, :class:`GenerateStage`,
:class:`ComposeStage`, :class:`GateStage`, :class:`FinalizeStage`. A follow-up's subject is resolved before them
(:class:`SubjectResolver`)."""

from generation.stages.base import Abstain, Evidence, Stage, StageContext, Turn
from generation.stages.choose import ComposeStage
from generation.stages.evidence import EvidenceStage
from generation.stages.finalize import FinalizeStage
from generation.stages.gate import GateStage
from generation.stages.generate import GenerateStage
from generation.stages.prepare import FactsStage, RewriteStage
from generation.stages.read import QuoteStage, ReadStage, RestOfListStage
from generation.stages.retrieve import RetrieveStage
from generation.stages.subject import Subject, SubjectResolver

__all__ = ["Abstain", "ComposeStage", "Evidence", "EvidenceStage", "FactsStage", "FinalizeStage", "GateStage",
           "GenerateStage", "QuoteStage", "ReadStage", "RestOfListStage", "RetrieveStage", "RewriteStage", "Stage", "StageContext",
           "Subject", "SubjectResolver", "Turn"]
