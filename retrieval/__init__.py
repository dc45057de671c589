"""Retrieval: embedders, BM25, HNSW, fusion, MMR, confidence, structured facts, index lifecycle."""

from retrieval.confidence import retrieval_confidence
from retrieval.config import RetrievalConfig
from retrieval.embedders import make_embedder
from retrieval.facts import FactsResult, FactsTable
from retrieval.index import BuildReport, IndexManager, IndexUnavailable
from retrieval.search import SearchIndex
from retrieval.types import Embedder, Hit, Retriever, SearchResult

__all__ = [
    "BuildReport",
    "Embedder",
    "FactsResult",
    "FactsTable",
    "Hit",
    "IndexManager",
    "IndexUnavailable",
    "RetrievalConfig",
    "Retriever",
    "SearchIndex",
    "SearchResult",
    "make_embedder",
    "retrieval_confidence",
]
