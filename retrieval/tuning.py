"""Per-index fusion constants fitted on labelled questions (``python -m bot calibrate`` calls this).

One global setting cannot serve every corpus: on the sample prodi site (short keyword queries, course codes,
names) BM25 carries half the ranking, while on Indonesian Wikipedia paragraphs (IDK-MRC) the dense retriever is
far stronger and a 50/50 fusion ranks below dense alone (docs/retrieval.md, "Evaluation and tuning"). So an index
can carry its own fusion constants, fitted on questions about *that* corpus:

    fit = fit_fusion_report(index, items)      # items: retrieval.evaluation.EvalItem or dataset rows
    fit.values                                 # {"fusion": "weighted", "fusion_norm": "zscore", "dense_weight": 0.8}
    manager.save_fusion(fit)                   # DATA_DIR/index/versions/<current>/fusion.json, reloaded at once

``fit_fusion(index, items)`` returns just ``fit.values``. ``IndexManager.load`` applies a version's
``fusion.json`` over the configured defaults (``apply_fusion``), and a rebuild carries it to the new version.

The fit scores every candidate of ``CANDIDATES`` (weighted sum with min-max or z-score normalisation and dense
weights 0–1, or RRF) by MRR@10 over the labelled questions, asking for 10 hits as the bot does, with everything
else (MMR, caps, facts, anchors, query normalisation) as configured. It keeps the index's current constants unless
the best candidate beats them by at least ``min_gain`` MRR@10 on at least ``MIN_ITEMS`` questions, so a handful of
questions cannot move them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from retrieval.config import RetrievalConfig
from retrieval.evaluation import EvalItem, item_from_row, metrics_for, url_key
from retrieval.search import SearchIndex
from retrieval.types import Embedder, calibration_of

__all__ = [
    "CANDIDATES", "FITTED_FIELDS", "FUSION_FILE", "MIN_ITEMS", "FusionFit", "apply_fusion", "fit_fusion",
    "fit_fusion_report", "load_fusion", "save_fusion",
]

FUSION_FILE = "fusion.json"
FITTED_FIELDS = ("fusion", "fusion_norm", "dense_weight", "rrf_k")
MIN_ITEMS = 20
DEFAULT_MIN_GAIN = 0.005  # MRR@10: one question of 100 moving from rank 2 to rank 1 is 0.005


def _candidates() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"fusion": "weighted", "fusion_norm": "minmax", "dense_weight": w} for w in (0.0, 1.0)]
    for norm in ("minmax", "zscore"):  # w = 0 or 1 ranks by one signal alone: the normalisation does not matter
        out += [{"fusion": "weighted", "fusion_norm": norm, "dense_weight": w}
                for w in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9)]
    out += [{"fusion": "rrf", "rrf_k": k} for k in (10, 60)]
    return out


CANDIDATES: tuple[dict[str, Any], ...] = tuple(_candidates())


@dataclass(frozen=True)
class FusionFit:
    """What a fit chose and why: ``values`` (RetrievalConfig fields), the question count, the current and the
    chosen configuration's R@1 / MRR@10, and every candidate's scores."""

    values: dict[str, Any]
    n: int
    before: dict[str, float]
    after: dict[str, float]
    changed: bool
    candidates: list[dict[str, Any]] = field(default_factory=list)
    fitted_at: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"values": self.values, "n": self.n, "before": self.before, "after": self.after,
                "changed": self.changed, "fitted_at": self.fitted_at, "candidates": self.candidates}


class QueryMemo:
    """An embedder wrapper that embeds every question once for a whole fit (configurations repeat the same
    questions); passages go to the wrapped embedder as they are."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.calibration_id = calibration_of(inner)
        self.dim = inner.dim
        self._seen: dict[str, np.ndarray] = {}

    def prime(self, queries: Sequence[str]) -> None:
        """Embed the questions not seen yet, in batches."""
        todo = [q for q in dict.fromkeys(queries) if q not in self._seen]
        for start in range(0, len(todo), 256):
            batch = todo[start:start + 256]
            self._seen.update(zip(batch, np.asarray(self.inner.embed(batch, kind="query")), strict=True))

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        if kind != "query":
            return self.inner.embed(texts, kind=kind)
        self.prime(texts)
        return np.stack([self._seen[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


def _as_items(items: Iterable[EvalItem | Mapping[str, Any]]) -> list[EvalItem]:
    """EvalItems as they are; dataset rows (``relevant_doc_ids`` or ``relevant_urls``) converted; rows without
    relevant documents (unanswerable questions of an answers set) skipped."""
    out = []
    for n, item in enumerate(items, 1):
        if isinstance(item, EvalItem):
            out.append(item)
            continue
        converted = item_from_row(item, n)
        if converted is not None:
            out.append(converted)
    return out


def _score(index: SearchIndex, items: Sequence[EvalItem]) -> dict[str, float]:
    """Mean R@1 and MRR@10 with 10 hits asked for (the bot's candidate pool, not a widened one)."""
    r1 = mrr = 0.0
    for item in items:
        hits = index.search(item.query, k=10, mode="hybrid").hits
        keys = list(dict.fromkeys(url_key(h.url) if item.by_url else h.doc_id for h in hits))
        m = metrics_for(keys, item.relevant, ks=(1, 10))
        r1 += m["recall@1"]
        mrr += m["mrr@10"]
    n = max(len(items), 1)
    return {"recall@1": round(r1 / n, 4), "mrr@10": round(mrr / n, 4)}


def _current(config: RetrievalConfig) -> dict[str, Any]:
    values: dict[str, Any] = {"fusion": config.fusion}
    if config.fusion == "rrf":
        values["rrf_k"] = config.rrf_k
    else:
        values.update(fusion_norm=config.fusion_norm, dense_weight=config.dense_weight)
    return values


def fit_fusion_report(
    index: SearchIndex,
    items: Iterable[EvalItem | Mapping[str, Any]],
    *,
    candidates: Sequence[Mapping[str, Any]] = CANDIDATES,
    min_gain: float = DEFAULT_MIN_GAIN,
    min_items: int = MIN_ITEMS,
) -> FusionFit:
    """Score the index's current fusion constants and every candidate on ``items``; choose the best by MRR@10
    (ties: R@1, then the one nearest the current dense weight). Blocking (a search per question per candidate):
    call it from a CLI command or an executor."""
    labelled = _as_items(items)
    memo = QueryMemo(index.embedder)
    current = _current(index.config)
    before = _score(index.with_config(index.config, embedder=memo), labelled)
    table: list[dict[str, Any]] = []  # FusionFit.candidates rows: "values" plus _score's metrics
    for candidate in candidates:
        config = dataclasses.replace(index.config, **candidate)
        table.append({"values": dict(candidate), **_score(index.with_config(config, embedder=memo), labelled)})

    def key(row: dict[str, Any]) -> tuple[float, float, float]:
        w = row["values"].get("dense_weight", index.config.dense_weight)
        return (row["mrr@10"], row["recall@1"], -abs(w - index.config.dense_weight))

    best = max(table, key=key) if table else {"values": current, **before}
    changed = len(labelled) >= min_items and best["mrr@10"] >= before["mrr@10"] + min_gain
    values = dict(best["values"]) if changed else current
    after = {"recall@1": best["recall@1"], "mrr@10": best["mrr@10"]} if changed else before
    return FusionFit(values=values, n=len(labelled), before=before, after=after, changed=changed, candidates=table,
                     fitted_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def fit_fusion(index: SearchIndex, items: Iterable[EvalItem | Mapping[str, Any]], **kwargs: Any) -> dict[str, Any]:
    """The fusion constants (RetrievalConfig field → value) fitted for ``index`` on labelled ``items``; see
    :func:`fit_fusion_report` for the scores behind them."""
    return fit_fusion_report(index, items, **kwargs).values


def apply_fusion(config: RetrievalConfig, values: Mapping[str, Any]) -> RetrievalConfig:
    """``config`` with fitted fusion values over it; ValueError on a field that is not a fusion constant or an
    invalid value."""
    unknown = set(values) - set(FITTED_FIELDS)
    if unknown:
        raise ValueError(f"{FUSION_FILE} sets {', '.join(sorted(unknown))}; only {', '.join(FITTED_FIELDS)} can be fitted")
    return dataclasses.replace(config, **dict(values))


def save_fusion(directory: Path, fit: FusionFit | Mapping[str, Any]) -> Path:
    """Write ``fusion.json`` into an index version directory (atomically); returns its path."""
    payload = fit.as_json() if isinstance(fit, FusionFit) else {"values": dict(fit)}
    apply_fusion(RetrievalConfig(), payload["values"])  # refuse to write what could not be loaded
    path = Path(directory) / FUSION_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


def load_fusion(directory: Path) -> dict[str, Any] | None:
    """The fitted values in a version directory's ``fusion.json``, or None when there is none. ValueError when
    the file is unreadable or sets anything but fusion constants."""
    path = Path(directory) / FUSION_FILE
    if not path.exists():
        return None
    try:
        values = json.loads(path.read_text(encoding="utf-8"))["values"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path} is unreadable ({error!r})") from None
    if not isinstance(values, dict):
        raise ValueError(f"{path}: 'values' must be an object")
    apply_fusion(RetrievalConfig(), values)
    return values
