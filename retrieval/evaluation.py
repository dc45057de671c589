"""Retrieval evaluation: Recall@k, MRR@k and NDCG@k (k = 1, 3, 5, 10), globally and per category.

Relevance comes from ``relevant_doc_ids`` (document ids) or ``relevant_urls`` (compared by URL path, so a
host-relative ``/curriculum/`` matches ``http://127.0.0.1:8000/curriculum/``). Ranked lists are deduplicated
before scoring, so Recall@k can never exceed 1 (the thesis's 1.03 counted one relevant document twice).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import urlsplit

from retrieval.search import check_mode
from retrieval.types import Retriever

__all__ = [
    "KS", "EvalItem", "EvalResult", "evaluate", "item_from_row", "load_dataset", "metrics_for", "ranked_keys", "to_markdown", "url_key",
    "write_markdown_section",
]

KS = (1, 3, 5, 10)

# what :func:`evaluate` returns (functional form: "global" is a keyword); ``per_category`` maps a category to its
# ``n`` and mean metrics, ``ranked`` maps an item id to its ranked keys
EvalResult = TypedDict("EvalResult", {
    "mode": str,
    "n": int,
    "global": dict[str, float],
    "per_category": dict[str, dict[str, float]],
    "ranked": dict[str, list[str]],
})


def url_key(url: str) -> str:
    """The comparable part of a URL: its path without a trailing slash (``/`` for the root)."""
    path = urlsplit(url.strip()).path or "/"
    return path.rstrip("/") or "/"


@dataclass(frozen=True, slots=True)
class EvalItem:
    id: str
    query: str
    category: str
    relevant: frozenset[str]
    by_url: bool


def load_dataset(path: Path) -> list[EvalItem]:
    """Items with at least one relevant document (unanswerable items have none and are skipped)."""
    items = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as error:
            raise ValueError(f"{path}:{n}: not JSON ({error})") from None
        if (obj.get("relevant_doc_ids") or obj.get("relevant_urls")) and "query" not in obj:
            raise ValueError(f"{path}:{n}: missing 'query'")
        item = item_from_row(obj, n)
        if item is not None:
            items.append(item)
    return items


def item_from_row(obj: Mapping[str, Any], n: int) -> EvalItem | None:
    """A dataset row as an EvalItem: relevance from ``relevant_doc_ids`` (document ids) or ``relevant_urls`` (URL
    paths); None for a row with neither (an unanswerable question of an answers set). ``n`` is the fallback id."""
    if obj.get("relevant_doc_ids"):
        relevant, by_url = frozenset(str(x) for x in obj["relevant_doc_ids"]), False
    elif obj.get("relevant_urls"):
        relevant, by_url = frozenset(url_key(u) for u in obj["relevant_urls"]), True
    else:
        return None
    return EvalItem(str(obj.get("id", n)), str(obj["query"]), str(obj.get("category") or "all"), relevant, by_url)


def ranked_keys(retriever: Retriever, query: str, *, by_url: bool, mode: str, at_least: int = 10) -> list[str]:
    """Distinct document ids (or URL paths) in rank order, searching deeper until ``at_least`` are found."""
    k = 30
    while True:
        result = retriever.search(query, k=k, mode=mode)
        keys = list(dict.fromkeys(url_key(h.url) if by_url else h.doc_id for h in result.hits))
        if len(keys) >= at_least or len(result.hits) < k or k >= 2000:
            return keys
        k *= 2


def metrics_for(ranked: Sequence[str], relevant: Iterable[str], ks: Sequence[int] = KS) -> dict[str, float]:
    relevant = set(relevant)
    ranked = list(dict.fromkeys(ranked))
    out: dict[str, float] = {}
    first = next((i for i, key in enumerate(ranked, 1) if key in relevant), None)
    for k in ks:
        top = ranked[:k]
        hits = [i for i, key in enumerate(top, 1) if key in relevant]
        out[f"recall@{k}"] = len(hits) / len(relevant) if relevant else 0.0
        out[f"mrr@{k}"] = 1.0 / first if first is not None and first <= k else 0.0
        dcg = sum(1.0 / math.log2(i + 1) for i in hits)
        idcg = sum(1.0 / math.log2(i + 1) for i in range(1, min(k, len(relevant)) + 1))
        out[f"ndcg@{k}"] = dcg / idcg if idcg else 0.0
    return out


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {key: round(sum(r[key] for r in rows) / len(rows), 4) for key in rows[0]}


def evaluate(retriever: Retriever, items: Sequence[EvalItem], mode: str = "hybrid") -> EvalResult:
    """``{"mode", "n", "global", "per_category", "ranked"}``; ``ranked`` maps item id → ranked keys."""
    check_mode(mode)
    per_item: list[tuple[EvalItem, dict[str, float]]] = []
    ranked: dict[str, list[str]] = {}
    for item in items:
        keys = ranked_keys(retriever, item.query, by_url=item.by_url, mode=mode)
        ranked[item.id] = keys
        per_item.append((item, metrics_for(keys, item.relevant)))
    categories: dict[str, list[dict[str, float]]] = {}
    for item, m in per_item:
        categories.setdefault(item.category, []).append(m)
    return {
        "mode": mode,
        "n": len(per_item),
        "global": _mean([m for _, m in per_item]),
        "per_category": {c: {"n": len(rows), **_mean(rows)} for c, rows in sorted(categories.items())},
        "ranked": ranked,
    }


def to_markdown(results: Sequence[EvalResult], title: str = "Retrieval") -> str:
    """Thesis-style tables: one global table per mode (rows MRR/Recall/NDCG, columns k), then per category."""
    lines = [f"### {title}", ""]
    if len(results) > 1:
        lines += ["| mode | n | R@1 | MRR@3 | MRR@5 | MRR@10 | R@10 | NDCG@5 | NDCG@10 |", "|---|---|---|---|---|---|---|---|---|"]
        for res in results:
            g = res["global"]
            lines.append(
                f"| {res['mode']} | {res['n']} | {g['recall@1']:.3f} | {g['mrr@3']:.3f} | {g['mrr@5']:.3f} | "
                f"{g['mrr@10']:.3f} | {g['recall@10']:.3f} | {g['ndcg@5']:.3f} | {g['ndcg@10']:.3f} |"
            )
        lines.append("")
    for res in results:
        g = res["global"]
        lines += [f"#### {res['mode']}: global (n = {res['n']})", "", "| metric | k=1 | k=3 | k=5 | k=10 |", "|---|---|---|---|---|"]
        for name, key in (("MRR@k", "mrr"), ("Recall@k", "recall"), ("NDCG@k", "ndcg")):
            lines.append(f"| {name} | " + " | ".join(f"{g[f'{key}@{k}']:.3f}" for k in KS) + " |")
        lines.append("")
        for k in (3, 5, 10):
            lines += [f"#### {res['mode']}: per category, k={k}", "", f"| category | n | MRR@{k} | Recall@{k} | NDCG@{k} |",
                      "|---|---|---|---|---|"]
            for cat, m in res["per_category"].items():
                lines.append(f"| {cat} | {m['n']} | {m[f'mrr@{k}']:.3f} | {m[f'recall@{k}']:.3f} | {m[f'ndcg@{k}']:.3f} |")
            lines.append("")
    return "\n".join(lines)


def write_markdown_section(path: Path, body: str, key: str = "retrieval") -> None:
    """Put ``body`` between ``<!-- {key}:start -->`` and ``<!-- {key}:end -->`` in ``path``: replaced in place when
    the markers exist, appended otherwise (the file may hold other areas' sections)."""
    start, end = f"<!-- {key}:start -->", f"<!-- {key}:end -->"
    block = f"{start}\n{body.rstrip()}\n{end}\n"
    path = Path(path)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if start in text and end in text:
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        text = head + block + tail
    else:
        text = (text.rstrip() + "\n\n" if text.strip() else "") + block
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
