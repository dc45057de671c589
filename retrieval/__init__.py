"""Retrieval: embedders, BM25, HNSW, fusion, MMR, confidence, structured facts, index lifecycle."""

from retrieval.types import Embedder, Hit, Retriever, SearchResult

__all__ = ["Embedder", "Hit", "Retriever", "SearchResult"]
