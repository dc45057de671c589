"""Token entropy (eq. 9–12 of docs/answers.md, "Token entropy and DRAGIN rounds"): per-token Shannon entropy over the top-k candidates and the DRAGIN
confidence derived from the mean."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["TOP_K", "dragin_confidence", "entropy_from_logits", "entropy_from_logprobs", "mean_entropy"]

TOP_K = 10
# normalize(H̄) maps mean entropy onto 0..1 with H_max = ln(TOP_K) (the entropy of a flat top-k distribution).
_H_MAX = math.log(TOP_K)


def entropy_from_logprobs(logprobs: Sequence[float] | NDArray[np.float64]) -> float:
    """Eq. 9–10: renormalise the candidates' log-probabilities and return their Shannon entropy in nats."""
    if len(logprobs) == 0:
        return _H_MAX
    arr = np.asarray(logprobs, dtype=np.float64)
    arr = arr - arr.max()
    p = np.exp(arr)
    p /= p.sum()
    nz = p[p > 0]
    return float(-(nz * np.log(nz)).sum())


def entropy_from_logits(logits: np.ndarray, k: int = TOP_K) -> float:
    """Entropy of the top-k of a raw logits vector (a zero-copy view of llama.cpp's last-token logits)."""
    if logits.size <= k:
        top = logits
    else:
        top = logits[np.argpartition(logits, -k)[-k:]]
    return entropy_from_logprobs(top.astype(np.float64))


def mean_entropy(entropies: Sequence[float]) -> float:
    """Eq. 11; an empty answer counts as maximally uncertain (docs/answers.md, the edge cases of eq. 9–12)."""
    if not entropies:
        return _H_MAX
    return float(sum(entropies) / len(entropies))


def dragin_confidence(entropies: Sequence[float], h_max: float = _H_MAX) -> float:
    """Eq. 12: conf = 1 − normalize(H̄), normalize(H) = clamp(H / h_max, 0, 1)."""
    h = mean_entropy(entropies)
    return float(1.0 - min(max(h / h_max, 0.0), 1.0))
