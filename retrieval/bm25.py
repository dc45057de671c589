"""Okapi BM25 over an inverted index, scoring exactly like ``rank_bm25.BM25Okapi``.

rank-bm25 loops over every document for every query term (a Python list comprehension), which takes far more than
50 ms at 100k chunks (see docs/benchmarks.md). This index keeps, for every term, the documents that contain it
and their precomputed BM25 contribution, so a query touches only the postings of its terms. The formula is
rank-bm25's: idf = ln(N − n + 0.5) − ln(n + 0.5), negative idfs replaced by ε·mean(idf), k1 = 1.5, b = 0.75,
ε = 0.25, and a query term repeated r times counts r times. A test checks the scores against rank-bm25.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

__all__ = ["BM25Index"]


class BM25Index:
    """Inverted-index BM25. Build with :meth:`from_tokens`, query with :meth:`scores` or :meth:`top`."""

    def __init__(
        self,
        vocab: dict[str, int],
        offsets: np.ndarray,
        doc_ids: np.ndarray,
        weights: np.ndarray,
        n_docs: int,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
    ) -> None:
        self.vocab = vocab
        self.offsets = offsets
        self.doc_ids = doc_ids
        self.weights = weights
        self.n_docs = n_docs
        self.k1, self.b, self.epsilon = k1, b, epsilon

    @classmethod
    def from_tokens(
        cls, corpus: Sequence[Sequence[str]], *, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25
    ) -> BM25Index:
        n_docs = len(corpus)
        doc_len = np.fromiter((len(doc) for doc in corpus), dtype=np.float64, count=n_docs)
        avgdl = float(doc_len.sum() / n_docs) if n_docs else 1.0
        postings: dict[str, list[tuple[int, int]]] = {}
        for row, doc in enumerate(corpus):
            for term, tf in Counter(doc).items():
                postings.setdefault(term, []).append((row, tf))
        # idf exactly as rank_bm25.BM25Okapi._calc_idf (dict order = first occurrence order; the mean is the same)
        idf: dict[str, float] = {}
        negatives: list[str] = []
        for term, plist in postings.items():
            value = math.log(n_docs - len(plist) + 0.5) - math.log(len(plist) + 0.5)
            idf[term] = value
            if value < 0:
                negatives.append(term)
        if idf:
            eps = epsilon * (sum(idf.values()) / len(idf))
            for term in negatives:
                idf[term] = eps
        norm = k1 * (1 - b + b * doc_len / (avgdl or 1.0))
        vocab: dict[str, int] = {}
        offsets = [0]
        all_docs: list[np.ndarray] = []
        all_weights: list[np.ndarray] = []
        for term, plist in postings.items():
            vocab[term] = len(vocab)
            rows = np.fromiter((r for r, _ in plist), dtype=np.int32, count=len(plist))
            tfs = np.fromiter((t for _, t in plist), dtype=np.float64, count=len(plist))
            all_docs.append(rows)
            all_weights.append(idf[term] * (tfs * (k1 + 1) / (tfs + norm[rows])))
            offsets.append(offsets[-1] + len(plist))
        return cls(
            vocab,
            np.asarray(offsets, dtype=np.int64),
            np.concatenate(all_docs) if all_docs else np.zeros(0, np.int32),
            np.concatenate(all_weights) if all_weights else np.zeros(0, np.float64),
            n_docs,
            k1=k1,
            b=b,
            epsilon=epsilon,
        )

    def scores(self, query_terms: Iterable[str]) -> np.ndarray:
        """BM25 score of every document (float64 array of length ``n_docs``)."""
        out = np.zeros(self.n_docs, dtype=np.float64)
        for term, reps in Counter(query_terms).items():
            idx = self.vocab.get(term)
            if idx is None:
                continue
            lo, hi = self.offsets[idx], self.offsets[idx + 1]
            contribution = self.weights[lo:hi]
            out[self.doc_ids[lo:hi]] += contribution * reps if reps > 1 else contribution
        return out

    def top(self, query_terms: Iterable[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows and scores of the ``k`` best documents with a positive score, best first."""
        return self.top_of(self.scores(query_terms), k)

    @staticmethod
    def top_of(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows and scores of the ``k`` best positive entries of a :meth:`scores` array, best first."""
        positive = np.flatnonzero(scores > 0)
        if positive.size == 0 or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        if positive.size > k:
            part = np.argpartition(-scores[positive], k - 1)[:k]
            positive = positive[part]
        order = positive[np.argsort(-scores[positive], kind="stable")]
        return order, scores[order]

    def document_frequency(self, term: str) -> int:
        idx = self.vocab.get(term)
        return 0 if idx is None else int(self.offsets[idx + 1] - self.offsets[idx])

    # --- persistence -------------------------------------------------------------------------------------------
    def save(self, directory: Path) -> None:
        np.savez(
            directory / "bm25.npz", offsets=self.offsets, doc_ids=self.doc_ids, weights=self.weights
        )
        meta = {"n_docs": self.n_docs, "k1": self.k1, "b": self.b, "epsilon": self.epsilon, "vocab": list(self.vocab)}
        (directory / "bm25_vocab.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> BM25Index:
        meta = json.loads((directory / "bm25_vocab.json").read_text(encoding="utf-8"))
        with np.load(directory / "bm25.npz") as data:
            offsets, doc_ids, weights = data["offsets"], data["doc_ids"], data["weights"]
        vocab = {term: i for i, term in enumerate(meta["vocab"])}
        if len(offsets) != len(vocab) + 1 or (len(offsets) and offsets[-1] != len(doc_ids)):
            raise ValueError("bm25 files are inconsistent")
        return cls(vocab, offsets, doc_ids, weights, int(meta["n_docs"]), k1=meta["k1"], b=meta["b"],
                   epsilon=meta["epsilon"])
