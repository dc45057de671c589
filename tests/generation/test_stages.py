"""The answer pipeline as components: a stage runs alone on plain inputs, any stage's ``Abstain`` becomes the
refusal once, and a new stage is added from one file without editing the pipeline."""

from __future__ import annotations

import pytest

from generation.calibration import DEFAULT_MODEL_PATH, Calibrator
from generation.config import PipelineConfig, StopReason
from generation.reader import Span
from generation.stages import Abstain, GateStage, QuoteStage, StageContext, Turn
from generation.types import Reply, Trace
from retrieval.types import Hit


def _context(config: PipelineConfig, calibrator: Calibrator | None = None) -> StageContext:
    # the services these stages never call (retrieval, embeddings, the LLM, the reader) are left out
    return StageContext(retriever=lambda: None, pool=None, config=config, embedder=None,  # type: ignore[arg-type]
                        calibrator=calibrator, reader=None, evidence_weights={})


def _turn(**fields) -> Turn:
    return Turn(question="berapa sks skripsi?", history=[], trace=Trace(trace_id="t"), **fields)


async def test_the_gate_stage_runs_alone_on_plain_inputs():
    gate = GateStage(_context(PipelineConfig(abstention="thresholds")))
    assert await gate.run(_turn(cov_chunk=0.9, cov_sentence=0.8)) == "answer"
    assert await gate.run(_turn(cov_chunk=0.2, cov_sentence=0.8)) == Abstain(StopReason.ABSTAIN_UNSUPPORTED)
    assert await gate.run(_turn(cov_chunk=0.9, cov_sentence=0.8, numbers_ok=False)) == Abstain(
        StopReason.ABSTAIN_UNSUPPORTED)


async def test_the_calibrated_gate_stage_reads_the_bundled_model():
    model = Calibrator.load(DEFAULT_MODEL_PATH)
    gate = GateStage(_context(PipelineConfig(abstention="calibrated"), model))
    turn = _turn(cov_chunk=0.9, cov_sentence=0.8)  # no LLM ran: the hand thresholds decide, as documented
    assert await gate.run(turn) == "answer" and turn.p_correct is None
    steps = [s["step"] for s in turn.trace.steps]
    assert steps == ["features"]


async def test_the_quote_stage_turns_a_span_into_the_reply():
    passage = "Skripsi: 6 SKS. Diambil pada semester 7 atau 8."
    hit = Hit(chunk_id="c1", doc_id="d1", url="http://prodi.test/kurikulum/", title="Kurikulum", score=1.0,
              text=passage)
    span = Span(start=9, end=14, text="6 SKS", score=7.0, null=-2.0, p=0.9)
    turn = _turn(read_hit=hit, read_span=span, read_passage=passage, p_correct=0.8, normalized="berapa sks skripsi")
    decision = await QuoteStage(_context(PipelineConfig(answerer="reader"))).run(turn)
    assert decision == StopReason.READER_SPAN
    assert isinstance(turn.result, Reply)
    assert turn.result.answer == "Skripsi: 6 SKS. [1]" and turn.result.highlights == ("6 SKS",)
    assert turn.result.sources[0].url == "http://prodi.test/kurikulum/" and turn.result.confidence == 0.8


class PrivateDataStage:
    """A toy policy stage, written in this file only: it refuses questions asking for a password."""

    name = "private_data"

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def run(self, turn: Turn) -> str | Abstain:
        self.seen.append(turn.normalized)
        if "password" in turn.normalized.lower():
            return Abstain(StopReason.ABSTAIN_UNSUPPORTED)
        return "pass"


@pytest.mark.slow
async def test_a_new_stage_is_added_from_one_file(make_reader_pipeline):
    pipeline = make_reader_pipeline()
    stage = PrivateDataStage()
    pipeline.add_stage(stage, before="read")
    assert [s.name for s in pipeline.stages()] == ["rewrite", "facts", "retrieve", "rest_of_list", "private_data", "read",
                                                   "finalize"]
    refused = await pipeline.answer("password wifi lab apa?")
    assert refused.abstained and refused.stop_reason == StopReason.ABSTAIN_UNSUPPORTED
    names = [s["name"] for s in refused.trace.stages]
    assert names[-1] == "private_data" and refused.trace.stages[-1]["decision"].startswith("abstain:")
    assert [s["step"] for s in refused.trace.steps if s["step"] == "final"] == ["final"]  # written once
    answered = await pipeline.answer("Berapa SKS total untuk lulus?")
    assert [s["name"] for s in answered.trace.stages][3:6] == ["rest_of_list", "private_data", "read"]
    assert stage.seen[-1] and answered.trace.stages[4]["decision"] == "pass"


def test_a_stage_is_added_only_before_a_stage_that_exists(make_reader_pipeline):
    pipeline = make_reader_pipeline()
    with pytest.raises(ValueError, match="no stage named 'nope'"):
        pipeline.add_stage(PrivateDataStage(), before="nope")


@pytest.mark.slow
async def test_the_trace_names_the_facts_rule_that_decided(make_reader_pipeline):
    pipeline = make_reader_pipeline()
    passed = await pipeline.answer("berapa sks basis data?")  # a course named in passing: the pages answer
    facts = [s for s in passed.trace.steps if s["step"] == "facts"]
    assert facts and facts[-1]["rule"] == "only_name"
    table = await pipeline.answer("berapa sks mata kuliah basis data?")
    assert table.stop_reason == StopReason.FACTS_LOOKUP
    assert [s["rule"] for s in table.trace.steps if s["step"] == "facts"] == ["course_attribute"]


async def test_a_follow_up_the_facts_table_would_answer_with_the_last_reply_again_goes_to_the_pages(
        make_reader_pipeline):
    """ "dosen pengampunya siapa?" after the table listed semester 3's courses: the table matches only the carried
    constraints and would list the same courses again, which answers nothing the student asked. The facts stage
    steps aside when its reply is one the conversation already holds (the trace says why); the pages are read."""
    from storage.models import Message

    pipeline = make_reader_pipeline()
    listed = await pipeline.answer("Mata kuliah semester 3 yang 3 SKS apa saja?")
    assert listed.stop_reason == StopReason.FACTS_LOOKUP
    history = [Message("user", "Mata kuliah semester 3 yang 3 SKS apa saja?"),
               Message("assistant", listed.answer)]
    followup = await pipeline.answer("dosen pengampunya siapa?", history)
    facts = [s for s in followup.trace.steps if s["step"] == "facts"]
    assert facts and facts[-1].get("skipped") == "repeats_earlier_reply", facts
    assert followup.stop_reason != StopReason.FACTS_LOOKUP and followup.answer != listed.answer
    # … nor two turns later, whatever the reply in between said (the student asks again)
    later = await pipeline.answer("dosennya siapa ya?", [*history, Message("user", "dosen pengampunya siapa?"),
                                                       Message("assistant", followup.answer)])
    assert [s.get("skipped") for s in later.trace.steps if s["step"] == "facts"] == ["repeats_earlier_reply"]
    assert later.answer != listed.answer
    # a follow-up that narrows the list is still the table's ("yang 3 SKS" after all of semester 3's courses)
    all3 = await pipeline.answer("Mata kuliah semester 3 apa saja?")
    narrowed = await pipeline.answer("yang 3 SKS saja?", [Message("user", "Mata kuliah semester 3 apa saja?"),
                                                        Message("assistant", all3.answer)])
    assert all3.stop_reason == narrowed.stop_reason == StopReason.FACTS_LOOKUP and narrowed.answer != all3.answer
