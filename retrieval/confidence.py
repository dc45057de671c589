"""Retrieval confidence from the top-K dense distances (equations 1–8 of docs/answers.md, "Retrieval confidence").

The score is the product of three factors: the best similarity (eq. 1–2), how far the best similarity stands
above the mean of the top-K (eq. 3–6, "concentration"), and a penalty for short queries (eq. 7).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["clamp", "distance_to_similarity", "retrieval_confidence"]


def clamp(value: float, low: float, high: float) -> float:
    """Eq. 5: bound ``value`` to ``[low, high]``."""
    return min(max(value, low), high)


def distance_to_similarity(distance: float) -> float:
    """Eq. 1: cosine distance (0..2) to a similarity in [0, 1]."""
    return 1.0 - min(max(distance, 0.0) / 2.0, 1.0)


def retrieval_confidence(
    distances: Sequence[float],
    query_words: int,
    concentration_scale: float = 0.3,
    length_norm: float = 6.0,
) -> float:
    """Eq. 8: ``s1 · conc_weight · length_weight`` over the top-K cosine distances of one query.

    An empty list (nothing retrieved) has confidence 0.
    """
    if concentration_scale <= 0 or length_norm <= 0:
        raise ValueError("concentration_scale and length_norm must be positive (see RQ_* settings)")
    sims = [distance_to_similarity(float(d)) for d in distances]
    if not sims:
        return 0.0
    best = max(sims)  # eq. 2
    mean = sum(sims) / len(sims)  # eq. 3
    concentration = best - mean  # eq. 4
    conc_weight = clamp(concentration / concentration_scale, 0.0, 1.0)  # eq. 6
    length_weight = clamp(max(query_words, 0) / length_norm, 0.3, 1.0)  # eq. 7
    return best * conc_weight * length_weight
