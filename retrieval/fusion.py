"""Score fusion and result selection: normalised weighted sum, reciprocal rank fusion, anchor boost, MMR with a
per-page cap and content-hash dedup. Pure functions over numpy arrays, so they are easy to test."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["NORMALIZATIONS", "minmax", "mmr_select", "normalize", "rrf", "weighted_sum", "zscore"]

NORMALIZATIONS = ("minmax", "zscore")


def minmax(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1]; a constant vector becomes all ones if positive, else all zeros."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    lo, hi = float(values.min()), float(values.max())
    if hi - lo <= 1e-12:
        return np.ones_like(values) if hi > 0 else np.zeros_like(values)
    return (values - lo) / (hi - lo)


def zscore(values: np.ndarray) -> np.ndarray:
    """``(x − mean) / std`` over the candidate pool (the ranking of DBSF's mean ± 3σ scaling, without clipping);
    a constant vector becomes all zeros."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    std = float(values.std())
    if std <= 1e-12:
        return np.zeros_like(values)
    return (values - float(values.mean())) / std


_NORMALIZERS = {"minmax": minmax, "zscore": zscore}


def normalize(values: np.ndarray, method: str = "minmax") -> np.ndarray:
    """One score signal normalised over the candidate pool: ``minmax`` or ``zscore``."""
    try:
        return _NORMALIZERS[method](values)
    except KeyError:
        raise ValueError(f"unknown normalisation {method!r}; valid choices: {', '.join(NORMALIZATIONS)}") from None


def weighted_sum(dense: np.ndarray, lexical: np.ndarray, dense_weight: float, norm: str = "minmax") -> np.ndarray:
    """``w · norm(dense) + (1 − w) · norm(bm25)`` over one candidate pool."""
    return dense_weight * normalize(dense, norm) + (1.0 - dense_weight) * normalize(lexical, norm)


def rrf(rank_lists: Sequence[np.ndarray], size: int, k: int = 60) -> np.ndarray:
    """Reciprocal rank fusion: ``Σ 1 / (k + rank)`` (rank from 1) over the lists, scaled so the best is 1.

    Each list holds candidate positions (0..size−1) in rank order; absent candidates get nothing from it.
    """
    out = np.zeros(size, dtype=np.float64)
    for ranked in rank_lists:
        ranked = np.asarray(ranked, dtype=np.int64)
        out[ranked] += 1.0 / (k + np.arange(1, ranked.size + 1))
    top = out.max() if size else 0.0
    return out / top if top > 0 else out


def mmr_select(
    relevance: np.ndarray,
    vectors: np.ndarray,
    groups: Sequence[str],
    hashes: Sequence[str],
    k: int,
    *,
    diversity: float = 0.45,
    max_per_group: int = 2,
) -> list[int]:
    """Pick up to ``k`` candidates by maximal marginal relevance.

    ``diversity`` is the seed's λ: 0 keeps pure relevance order; the score of a candidate is
    ``(1 − λ)·rel − λ·max cos(candidate, selected)`` with ``rel`` scaled to [0, 1]. At most ``max_per_group``
    candidates of one page (group) and one candidate per content hash are kept.
    """
    n = int(relevance.size)
    if n == 0 or k <= 0:
        return []
    rel = np.asarray(relevance, dtype=np.float64)
    top = rel.max()
    rel = rel / top if top > 0 else rel
    max_sim = np.full(n, -np.inf)
    available = np.ones(n, dtype=bool)
    per_group: dict[str, int] = {}
    seen_hashes: set[str] = set()
    chosen: list[int] = []
    while len(chosen) < k and available.any():
        penalty = np.where(np.isfinite(max_sim), max_sim, 0.0)
        score = (1.0 - diversity) * rel - diversity * penalty
        score[~available] = -np.inf
        pick = int(np.argmax(score))
        available[pick] = False
        if hashes[pick] in seen_hashes or per_group.get(groups[pick], 0) >= max_per_group:
            continue
        seen_hashes.add(hashes[pick])
        per_group[groups[pick]] = per_group.get(groups[pick], 0) + 1
        chosen.append(pick)
        if diversity > 0:
            np.maximum(max_sim, vectors @ vectors[pick], out=max_sim)
    return chosen
