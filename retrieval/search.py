"""SearchIndex: one loaded index version (HNSW + BM25 + facts) and the hybrid search over it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import hnswlib
import numpy as np

from retrieval.aliases import AliasTable
from retrieval.analyzer import Analyzer
from retrieval.bm25 import BM25Index
from retrieval.confidence import retrieval_confidence
from retrieval.config import MODES, RetrievalConfig
from retrieval.facts import FactsResult, FactsTable
from retrieval.fusion import minmax, mmr_select, rrf, weighted_sum
from retrieval.normalize import FiredRule, QueryNormalizer
from retrieval.types import Embedder, Hit, SearchResult
from storage.models import Chunk

__all__ = ["Reranker", "SearchIndex", "check_mode", "passage_text"]

logger = logging.getLogger(__name__)

Reranker = Callable[[str, Sequence[str]], Sequence[float]]


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown search mode {mode!r}; valid choices: {', '.join(MODES)}")
    return mode


def passage_text(chunk: Chunk) -> str:
    """The text that is embedded and BM25-indexed for a chunk: its title, then its text."""
    title = (chunk.title or "").strip()
    text = chunk.text.strip()
    if title and not text.lower().startswith(title.lower()):
        return f"{title}\n{text}"
    return text


@dataclass(frozen=True, slots=True)
class _Pool:
    rows: np.ndarray  # candidate chunk rows
    cosine: np.ndarray  # exact cosine similarity of each candidate
    bm25: np.ndarray  # raw BM25 score of each candidate
    dense_rank: np.ndarray  # candidate positions in dense order
    bm25_rank: np.ndarray  # candidate positions in BM25 order


class SearchIndex:
    """A read-only index version. Thread-safe for concurrent searches (hnswlib queries release the GIL)."""

    def __init__(
        self,
        *,
        chunks: Sequence[Chunk],
        vectors: np.ndarray,
        hnsw: hnswlib.Index,
        labels: np.ndarray,
        bm25: BM25Index,
        facts: FactsTable,
        embedder: Embedder,
        config: RetrievalConfig,
        info: dict[str, object],
        reranker: Reranker | None = None,
        aliases: AliasTable | None = None,
    ) -> None:
        self.chunks = tuple(chunks)
        self.vectors = vectors
        self.hnsw = hnsw
        self.labels = labels  # hnsw label of each row
        self._row_of_label = {int(label): row for row, label in enumerate(labels)}
        self.bm25 = bm25
        self.facts = facts
        self.embedder = embedder
        self.config = config
        self.info = info
        self.reranker = reranker
        self.analyzer = Analyzer(stemming=config.bm25_stemming)
        self._hnsw_lock = threading.Lock()  # set_ef is global state; queries themselves are thread-safe
        self._doc_rows: dict[str, list[int]] = {}
        for row, chunk in enumerate(self.chunks):
            self._doc_rows.setdefault(chunk.doc_id, []).append(row)
        self._title_terms = [frozenset(self.analyzer(c.title or "")) for c in self.chunks]
        self.aliases = aliases or AliasTable()
        self._normalizer: QueryNormalizer | None = None
        self._normalizer_lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.chunks)

    def with_config(self, config: RetrievalConfig, *, embedder: Embedder | None = None) -> SearchIndex:
        """This index searched with another config (fusion constants, MMR, caps, …) and optionally another
        embedder. Shares every loaded structure (vectors, HNSW graph, BM25, facts, aliases); used to compare
        configurations without reloading (``retrieval.tuning``). BM25 was built with one analyzer, so
        ``bm25_stemming`` cannot change here."""
        if config.bm25_stemming != self.config.bm25_stemming:
            raise ValueError("BM25_STEMMING changes the BM25 index itself; rebuild the index to compare it")
        twin = SearchIndex(
            chunks=self.chunks, vectors=self.vectors, hnsw=self.hnsw, labels=self.labels, bm25=self.bm25,
            facts=self.facts, embedder=embedder or self.embedder, config=config, info=self.info,
            reranker=self.reranker, aliases=self.aliases,
        )
        twin._hnsw_lock = self._hnsw_lock  # one graph, one ef setting
        return twin

    # --- public API --------------------------------------------------------------------------------------------
    def search(self, query: str, k: int = 5, mode: str = "hybrid") -> SearchResult:
        """The ``k`` best chunks for ``query`` (modes hybrid|dense|bm25) with the retrieval confidence."""
        check_mode(mode)
        if self.config.query_normalization:
            query = self.normalize_query(query)
        started = time.perf_counter()
        qvec = self.embedder.embed([query], kind="query")[0]
        embed_ms = (time.perf_counter() - started) * 1000
        result = self.search_vector(query, qvec, k=k, mode=mode)
        result.timings_ms["embed"] = round(embed_ms, 3)
        return result

    @property
    def normalizer(self) -> QueryNormalizer:
        """This site's query normaliser (lexicon, glossary, the aliases mined at build time, the BM25 vocabulary),
        built on first use."""
        if self._normalizer is None:
            with self._normalizer_lock:
                if self._normalizer is None:
                    df = np.diff(self.bm25.offsets) if len(self.bm25.offsets) else np.zeros(0, np.int64)
                    vocabulary = dict(zip(self.bm25.vocab, df.tolist(), strict=True))
                    stem = self.analyzer.stem if self.analyzer.stemming else None
                    self._normalizer = QueryNormalizer(aliases=self.aliases, vocabulary=vocabulary, stem=stem)
        return self._normalizer

    def normalize_query(self, text: str, *, expand: bool = True) -> str:
        """``text`` in the site's words: slang and shorthand made formal, the long forms of abbreviations and the
        full names of lecturers added next to them (idempotent; digits, codes, e-mails and names kept). Used at the
        top of :meth:`search` when ``RetrievalConfig.query_normalization`` is on, and by the answer pipeline
        before the facts lookup and the gates. ``expand=False`` adds nothing (formal words only): the form to
        take a question's anchors from, so that an added long form the evidence does not spell out is not
        counted as missing."""
        return self.normalizer.normalize(text, expand=expand)

    def normalize_query_with_rules(self, text: str, *, expand: bool = True) -> tuple[str, list[FiredRule]]:
        """:meth:`normalize_query` and the normaliser's rules that changed ``text`` (``{"rule", "from", "to"}``
        records, :meth:`QueryNormalizer.normalize_with_rules`): what the answer trace shows."""
        return self.normalizer.normalize_with_rules(text, expand=expand)

    def search_vector(self, query: str, qvec: np.ndarray, k: int = 5, mode: str = "hybrid") -> SearchResult:
        """Like :meth:`search` with the query embedding given (benchmarks time embedding separately)."""
        check_mode(mode)
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        if k <= 0 or not self.chunks:
            return SearchResult(hits=(), confidence=0.0, mode=mode, timings_ms=timings)
        qvec = np.asarray(qvec, dtype=np.float32)
        # the pool does not grow with k (it did as 4·k): `eval retrieval` asks for 30 hits, the bot for a few, and
        # both must rank over the same RETRIEVAL_CANDIDATE_POOL, or the evaluation measures another configuration
        pool_size = max(self.config.candidate_pool, k)
        dense_rows, dense_dist = self._dense(qvec, pool_size)
        t1 = time.perf_counter()
        terms = self.analyzer(query)
        bm25_all = self.bm25.scores(terms) if terms else np.zeros(len(self.chunks))
        bm25_rows = self.bm25.top_of(bm25_all, pool_size)[0] if mode != "dense" else np.zeros(0, np.int64)
        t2 = time.perf_counter()
        timings["dense"] = round((t1 - t0) * 1000, 3)
        timings["bm25"] = round((t2 - t1) * 1000, 3)
        top_k = self.config.similarity_top_k
        confidence = retrieval_confidence(
            dense_dist[:top_k].tolist(), len(query.split()), self.config.concentration_scale, self.config.length_norm
        )
        if mode == "dense":
            pool = self._pool(qvec, dense_rows, np.zeros(0, np.int64), bm25_all)
            relevance = pool.cosine.copy()
        elif mode == "bm25":
            pool = self._pool(qvec, np.zeros(0, np.int64), bm25_rows, bm25_all)
            relevance = pool.bm25.copy()
        else:
            pool = self._pool(qvec, dense_rows, bm25_rows, bm25_all)
            if self.config.fusion == "rrf":
                relevance = rrf([pool.dense_rank, pool.bm25_rank], pool.rows.size, self.config.rrf_k)
            else:
                relevance = weighted_sum(pool.cosine, pool.bm25, self.config.dense_weight, self.config.fusion_norm)
        facts = FactsResult()
        if mode == "hybrid":
            relevance = minmax(relevance) if relevance.size else relevance
            pool, relevance, facts = self._fuse_facts(query, qvec, pool, relevance, bm25_all)
            relevance = relevance + self._anchor_bonus(pool.rows, terms)
        t3 = time.perf_counter()
        timings["fusion"] = round((t3 - t2) * 1000, 3)
        order = np.argsort(-relevance, kind="stable")
        if self.reranker is not None and mode == "hybrid":
            order, relevance = self._rerank(query, pool, order, relevance, k)
        hits = self._select(pool, relevance, order, k, mode, facts)
        timings["select"] = round((time.perf_counter() - t3) * 1000, 3)
        timings["total"] = round((time.perf_counter() - t0) * 1000, 3)
        return SearchResult(hits=tuple(hits), confidence=float(confidence), mode=mode, timings_ms=timings)

    # --- stages ------------------------------------------------------------------------------------------------
    def _dense(self, qvec: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        n = min(n, len(self._row_of_label))
        if n <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        ef = max(self.config.hnsw_ef_search, n)
        while True:
            try:
                with self._hnsw_lock:
                    self.hnsw.set_ef(ef)
                    labels, dist = self.hnsw.knn_query(qvec, k=n)
                break
            except RuntimeError:  # fewer reachable items than asked (deleted marks): ask for fewer
                if n <= 1:
                    return np.zeros(0, np.int64), np.zeros(0, np.float32)
                n = max(1, n // 2)
        rows = np.fromiter((self._row_of_label[int(x)] for x in labels[0]), dtype=np.int64, count=labels.shape[1])
        return rows, dist[0].astype(np.float32)

    def _pool(
        self, qvec: np.ndarray, dense_rows: np.ndarray, bm25_rows: np.ndarray, bm25_all: np.ndarray
    ) -> _Pool:
        rows = np.asarray(list(dict.fromkeys([*dense_rows.tolist(), *bm25_rows.tolist()])), dtype=np.int64)
        if rows.size == 0:
            empty = np.zeros(0, np.float64)
            return _Pool(rows, empty, empty, np.zeros(0, np.int64), np.zeros(0, np.int64))
        cosine = (self.vectors[rows] @ qvec).astype(np.float64)
        bm25 = bm25_all[rows].astype(np.float64)
        position = {int(r): i for i, r in enumerate(rows)}
        dense_rank = np.asarray([position[int(r)] for r in dense_rows], dtype=np.int64)
        bm25_rank = np.asarray([position[int(r)] for r in bm25_rows], dtype=np.int64)
        return _Pool(rows, cosine, bm25, dense_rank, bm25_rank)

    def _fuse_facts(
        self, query: str, qvec: np.ndarray, pool: _Pool, relevance: np.ndarray, bm25_all: np.ndarray
    ) -> tuple[_Pool, np.ndarray, FactsResult]:
        if not len(self.facts):
            return pool, relevance, FactsResult()
        facts = self.facts.lookup(query)
        if not facts.doc_ids:
            return pool, relevance, facts
        weight = self.config.facts_weight
        fact_rank = {doc: i for i, doc in enumerate(facts.doc_ids)}
        extra = [r for doc in facts.doc_ids for r in self._doc_rows.get(doc, [])[:1] if r not in set(pool.rows.tolist())]
        if extra:
            rows = np.concatenate([pool.rows, np.asarray(extra, dtype=np.int64)])
            add_cos = (self.vectors[extra] @ qvec).astype(np.float64)
            add_bm = bm25_all[extra].astype(np.float64)
            pool = _Pool(rows, np.concatenate([pool.cosine, add_cos]), np.concatenate([pool.bm25, add_bm]),
                         pool.dense_rank, pool.bm25_rank)
            relevance = np.concatenate([relevance, np.zeros(len(extra))])
        n = max(len(facts.doc_ids), 1)
        fact_score = np.asarray(
            [1.0 - 0.5 * fact_rank[self.chunks[r].doc_id] / n if self.chunks[r].doc_id in fact_rank else 0.0
             for r in pool.rows.tolist()]
        )
        return pool, (1.0 - weight) * relevance + weight * fact_score, facts

    def anchors(self, terms: Sequence[str]) -> set[str]:
        """Query anchors: terms with a digit, or rare in the corpus (in at most 5% of chunks)."""
        limit = max(1, int(0.05 * len(self.chunks)))
        return {t for t in terms if any(ch.isdigit() for ch in t) or 0 < self.bm25.document_frequency(t) <= limit}

    def _anchor_bonus(self, rows: np.ndarray, terms: list[str]) -> np.ndarray:
        bonus = np.zeros(rows.size)
        if self.config.anchor_boost <= 0 or not terms:
            return bonus
        anchors = self.anchors(terms)
        if anchors:
            for i, row in enumerate(rows.tolist()):
                if anchors & self._title_terms[row]:
                    bonus[i] = self.config.anchor_boost
        return bonus

    def _rerank(
        self, query: str, pool: _Pool, order: np.ndarray, relevance: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        assert self.reranker is not None
        head = order[: max(3 * k, 20)]
        scores = np.asarray(self.reranker(query, [passage_text(self.chunks[pool.rows[i]]) for i in head]), np.float64)
        keep = scores >= self.config.reranker_min_score
        new_rel = np.full(relevance.size, -np.inf)
        new_rel[head[keep]] = scores[keep]
        new_order = head[keep][np.argsort(-scores[keep], kind="stable")]
        return new_order, new_rel

    def _select(
        self,
        pool: _Pool,
        relevance: np.ndarray,
        order: np.ndarray,
        k: int,
        mode: str,
        facts: FactsResult,
    ) -> list[Hit]:
        order = order[np.isfinite(relevance[order])]
        head = order[: max(4 * k, 40)]
        rows = pool.rows[head]
        rel = relevance[head]
        rel_shift = rel - rel.min() + 1e-9 if rel.size and rel.min() < 0 else rel
        groups = [self.chunks[r].doc_id for r in rows.tolist()]
        hashes = [self.chunks[r].content_hash or self.chunks[r].chunk_id for r in rows.tolist()]
        picked = mmr_select(
            rel_shift, self.vectors[rows], groups, hashes, k,
            diversity=self.config.mmr_lambda if mode == "hybrid" else 0.0,
            max_per_group=self.config.max_chunks_per_page,
        )
        fact_docs = set(facts.doc_ids)
        hits = []
        for i in picked:
            row = int(rows[i])
            chunk = self.chunks[row]
            cos = float(pool.cosine[head[i]])
            scores = {"dense": round(cos, 6), "bm25": round(float(pool.bm25[head[i]]), 6)}
            if chunk.doc_id in fact_docs:
                scores["facts"] = 1.0
            hits.append(
                Hit(
                    chunk_id=chunk.chunk_id, doc_id=chunk.doc_id, url=chunk.url, title=chunk.title,
                    score=float(rel[i]), text=chunk.text, section=chunk.section,
                    distance=float(min(max(1.0 - cos, 0.0), 2.0)), scores=scores,
                )
            )
        return hits

    def facts_lookup(self, query: str) -> FactsResult:
        return self.facts.lookup(query)
