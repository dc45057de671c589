"""RetrievalConfig: the plain values retrieval needs, built from Settings in ``bot.wiring``."""

from __future__ import annotations

from dataclasses import dataclass

from retrieval.fusion import NORMALIZATIONS

__all__ = ["FUSIONS", "MODES", "RetrievalConfig"]

MODES = ("hybrid", "dense", "bm25")
FUSIONS = ("weighted", "rrf")


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    hnsw_m: int = 16
    hnsw_ef_construction: int = 200
    hnsw_ef_search: int = 64
    fusion: str = "weighted"
    # fusion_norm, dense_weight, mmr_lambda: fitted on the IDK-MRC tune split (4,046 answerable questions) + the
    # sample-site dev sets (69 questions); see docs/retrieval.md. An index may carry its own (retrieval/tuning.py).
    fusion_norm: str = "zscore"
    dense_weight: float = 0.65
    mmr_lambda: float = 0.2
    # max_chunks_per_page, anchor_boost, bm25_stemming, facts_weight, candidate_pool: re-measured on the same data
    # (docs/retrieval.md); no other value did better on both, so they stay as they were
    max_chunks_per_page: int = 2
    anchor_boost: float = 0.07
    bm25_stemming: bool = False
    reranker_model_path: str | None = None
    reranker_min_score: float = 0.1
    facts_weight: float = 0.6
    similarity_top_k: int = 5
    concentration_scale: float = 0.3
    length_norm: float = 6.0
    candidate_pool: int = 50
    hnsw_rebuild_fraction: float = 0.2
    rrf_k: int = 60
    query_normalization: bool = True  # informal spellings and shorthand → the site's words (retrieval/normalize.py)

    def __post_init__(self) -> None:
        if self.fusion not in FUSIONS:
            raise ValueError(f"unknown FUSION {self.fusion!r}; valid choices: {', '.join(FUSIONS)}")
        if self.fusion_norm not in NORMALIZATIONS:
            raise ValueError(
                f"unknown FUSION_NORM {self.fusion_norm!r}; valid choices: {', '.join(NORMALIZATIONS)}"
            )
        if not 0 <= self.dense_weight <= 1 or not 0 <= self.facts_weight <= 1 or not 0 <= self.mmr_lambda <= 1:
            raise ValueError("FUSION_DENSE_WEIGHT, FACTS_WEIGHT and MMR_LAMBDA must lie in [0, 1]")
        if self.max_chunks_per_page < 1 or self.similarity_top_k < 1 or self.candidate_pool < 1:
            raise ValueError("MAX_CHUNKS_PER_PAGE, SIMILARITY_TOP_K and the candidate pool must be at least 1")
