"""The answer pipeline's settings (:class:`PipelineConfig`, built from Settings in ``bot.wiring``), its stop reasons
and the errors an LLM call may raise. Shared by ``generation.pipeline`` and its stages (``generation.stages``)."""

from __future__ import annotations

from dataclasses import dataclass

from generation.errors import GenerationError

__all__ = ["ABSTENTION_MODES", "ANSWERERS", "LLM_ERRORS", "MAX_LIST_LINES", "PipelineConfig", "StopReason"]

# A list answer shows at most this many lines (the introducing sentence and its items); set, not fitted: the sample
# site's longest list (eight student communities after two introducing sentences) fits
MAX_LIST_LINES = 12

# What a call to the LLM pool may raise, each answered with the extractive fallback: a GenerationError (a backend's
# failure, which the pool maps to one; its timeout; a closed pool). The built-in types are there for one case only:
# a model that could not load, which the pool re-raises as its factory raised it (FileNotFoundError for a missing
# LLM_MODEL_PATH, OSError writing the bundled model, ValueError for a bad LLM_PROMPT_FORMAT, RuntimeError from
# llama.cpp or from a shut-down executor in ``pool.ready``). Nothing else inside the guarded tries raises them.
LLM_ERRORS: tuple[type[Exception], ...] = (GenerationError, OSError, ValueError, RuntimeError)


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
    # "reader" (the default): the learned reader (generation/reader/) reads the top chunks, its span is the answer
    # and its chunk selector's calibrated probability the gate; no LLM is loaded. "rules": the LLM span, hand
    # evidence weights and the calibrated gate over hand signals. make eval and bench/bench_reader.py run both side
    # by side (docs/answers.md, "Which answerer is the default")
    answerer: str = "reader"
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
