"""Wiring: build each component from Settings, in one place. Commands and the server call these builders.

Lower layers never see Settings; they receive plain values or their own small config objects from here.
"""

from __future__ import annotations

import logging

from bot.settings import Settings  # noqa: F401  (used by the builders below)

logger = logging.getLogger(__name__)

__all__: list[str] = []

# --- storage / ingestion (sync_jobs, storage.docstore) -------------------------------------------------------

# --- retrieval (index manager, embedder, facts) --------------------------------------------------------------


def build_retrieval_config(settings: Settings):  # -> retrieval.RetrievalConfig
    """The retrieval layer's frozen config from Settings."""
    from retrieval.config import RetrievalConfig

    return RetrievalConfig(
        hnsw_m=settings.hnsw_m,
        hnsw_ef_construction=settings.hnsw_ef_construction,
        hnsw_ef_search=settings.hnsw_ef_search,
        fusion=settings.fusion,
        dense_weight=settings.fusion_dense_weight,
        mmr_lambda=settings.mmr_lambda,
        max_chunks_per_page=settings.max_chunks_per_page,
        anchor_boost=settings.anchor_boost,
        bm25_stemming=settings.bm25_stemming,
        reranker_model_path=settings.reranker_model_path,
        reranker_min_score=settings.reranker_min_score,
        facts_weight=settings.facts_weight,
        similarity_top_k=settings.similarity_top_k,
        concentration_scale=settings.rq_concentration_scale,
        length_norm=settings.rq_length_norm,
        candidate_pool=settings.retrieval_candidate_pool,
        hnsw_rebuild_fraction=settings.hnsw_rebuild_fraction,
    )


def build_embedder(settings: Settings):  # -> retrieval.Embedder
    """The configured embedder (EMBEDDER) with its passage cache under DATA_DIR/index/cache."""
    from retrieval.embedders import make_embedder

    return make_embedder(settings.embedder, cache_dir=settings.index_dir / "cache")


def build_index_manager(settings: Settings, embedder=None):  # -> retrieval.IndexManager
    """The IndexManager over DATA_DIR/index (one per process: it caches the loaded index and hot-reloads it)."""
    from retrieval.index import IndexManager

    config = build_retrieval_config(settings)
    reranker = None
    if config.reranker_model_path:
        from retrieval.rerank import CrossEncoderReranker

        reranker = CrossEncoderReranker(config.reranker_model_path)
    return IndexManager(settings.index_dir, config, embedder or build_embedder(settings), reranker=reranker)


__all__ += ["build_embedder", "build_index_manager", "build_retrieval_config"]

# --- generation (LLM backend, worker pool, answer pipeline) --------------------------------------------------


def build_generator(settings: Settings):  # -> generation.Generator
    """One LLM backend instance (called inside each pool worker thread)."""
    if settings.llm_backend == "openai":
        from generation.openai_backend import OpenAIConfig, OpenAIGenerator

        return OpenAIGenerator(
            OpenAIConfig(
                endpoint=settings.llm_endpoint or "",
                api_key=settings.llm_api_key.get_secret_value() if settings.llm_api_key else None,
                prompt_format=settings.llm_prompt_format,
                timeout_s=settings.llm_timeout_seconds,
                n_ctx=settings.llm_n_ctx,
            )
        )
    from generation.llama_backend import LlamaConfig, LlamaGenerator

    return LlamaGenerator(
        LlamaConfig(
            model_path=settings.llm_model_path,
            models_dir=settings.models_dir,
            n_ctx=settings.llm_n_ctx,
            threads=settings.llm_threads,
            prompt_format=settings.llm_prompt_format,
            kv_reuse=settings.llm_kv_reuse,
        )
    )


def build_llm_pool(settings: Settings):  # -> generation.LLMPool
    """The bounded LLM worker pool (LLM_WORKERS model instances, LLM_TIMEOUT_SECONDS per request)."""
    from generation.pool import LLMPool

    return LLMPool(lambda: build_generator(settings), workers=settings.llm_workers, timeout_s=settings.llm_timeout_seconds)


def build_pipeline_config(settings: Settings):  # -> generation.PipelineConfig
    from generation.pipeline import PipelineConfig

    return PipelineConfig(
        top_k=settings.similarity_top_k,
        max_tokens=settings.llm_max_tokens,
        n_ctx=settings.llm_n_ctx,
        context_max_docs=settings.context_max_docs,
        context_char_budget=settings.context_char_budget,
        rq_bypass_confidence=settings.rq_bypass_confidence_threshold,
        rq_similarity_threshold=settings.rq_similarity_block_threshold,
        rq_postvalidate_margin=settings.rq_postvalidate_margin,
        rq_jaccard_min=settings.rq_jaccard_min,
        dragin_threshold=settings.dragin_threshold,
        dragin_max_iterations=settings.dragin_max_iterations,
        hyde=settings.hyde,
        support_tau=settings.support_tau,
        anchor_coverage_min=settings.answer_anchor_coverage_min,
        min_top_similarity=settings.answer_min_similarity,
        history_window=settings.history_window,
    )


def build_pipeline(settings: Settings, index_manager=None, pool=None, embedder=None):  # -> generation.AnswerPipeline
    """The answer pipeline over the current index (IndexManager.current()) and the LLM pool."""
    from generation.pipeline import AnswerPipeline
    from generation.telemetry import TelemetryWriter

    if index_manager is None:
        index_manager = build_index_manager(settings, embedder)
    return AnswerPipeline(
        retriever=index_manager.current,
        pool=pool or build_llm_pool(settings),
        config=build_pipeline_config(settings),
        embedder=embedder or index_manager.embedder,
        telemetry=TelemetryWriter(settings.telemetry_path, settings.telemetry_max_bytes),
    )


__all__ += ["build_generator", "build_llm_pool", "build_pipeline", "build_pipeline_config"]

# --- handlers (conversation store, chat service, channels) ---------------------------------------------------

# --- operations (reindex job, locks, runs, scheduler, metrics) ------------------------------------------------
