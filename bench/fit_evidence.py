"""Fit how evidence sentences are scored (generation.pipeline.EVIDENCE_WEIGHTS) on data the team did not write.

The answer is quoted from one evidence sentence, so the sentence ranked first decides most replies. This script
asks answerable questions of the IDK-MRC *tune* split (bench/idkmrc.py; the same fixed-seed passages as
bench/fit_abstention.py, indexed as their own corpus) with the LLM off, records every candidate sentence's score
components, and fits the weights as a conditional logit: the probability that a sentence is "the" answer sentence
is a softmax of its score over the question's candidates, and the target spreads over the candidates that contain
a gold span. Questions with no gold-containing candidate carry no signal about the choice and are left out.

Reported, for the hand weights and the fitted ones: the share of questions whose top-ranked sentence contains the
gold span, out of fold on the tune questions (5 folds) and on the IDK-MRC check split (never fitted on), and on the
sample site's dev set (tests/data/eval/answers.jsonl, a no-regression guard).

    python -m bench.fit_evidence                 # ≈ 15 min on 2 cores: ask, fit, report (JSON)
    python -m bench.fit_evidence --raw rows.jsonl [--from-raw rows.jsonl]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench import idkmrc

ROOT = Path(__file__).resolve().parents[1]
DEV_SET = ROOT / "tests" / "data" / "eval" / "answers.jsonl"
SEED = 20261122  # bench/fit_abstention.py's seed: the same tune passages
TUNE_PASSAGES = 700
TUNE_QUESTIONS = 600
CHECK_QUESTIONS = 300
FIXED = ("lexical", "embedding", "chunk")  # their fitted weights are rescaled to sum to 1, as the hand weights do


def _sample(passages: Sequence[Any], n_passages: int, n_questions: int, seed: int) -> tuple[list[Any], list[Any]]:
    rng = random.Random(seed)
    chosen = rng.sample(list(passages), min(n_passages, len(passages)))
    items = idkmrc.items(chosen, answerable=True)
    return idkmrc.documents(chosen), rng.sample(items, min(n_questions, len(items)))


async def _ask(pipeline: Any, items: Sequence[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    from generation.evaluation import contains_span

    rows = []
    for n, item in enumerate(items, 1):
        sents, comps, scores = await pipeline.evidence(str(item["query"]))
        golds = [str(g) for g in item.get("answers") or () if str(g).strip()]
        rows.append({"source": source, "id": str(item.get("id", n)), "components": [list(c) for c in comps],
                     "scores": scores, "gold": [any(contains_span(s.text, g) for g in golds) for s in sents]})
        if n % 50 == 0:
            print(f"  {source}: {n}/{len(items)}", file=sys.stderr, flush=True)
    return rows


def _pipeline(settings: Any, manager: Any) -> Any:
    from dataclasses import replace

    from bot import wiring
    from generation.pipeline import AnswerPipeline

    cfg = replace(wiring.build_pipeline_config(settings), use_llm=False, abstention="off")
    return AnswerPipeline(manager.current, wiring.build_llm_pool(settings), cfg, manager.embedder)


def collect(n_tune: int, n_check: int) -> list[dict[str, Any]]:
    from bench.evaluation import build_fresh_index, build_jsonl_index
    from bot.sample_site import SampleSite
    from bot.settings import Settings

    tune, check = idkmrc.split(idkmrc.load_passages())
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="prodi-fit-ev-") as tmp:
        embedder = None
        for name, passages, n_pass, n_q in (("idkmrc-tune", tune, TUNE_PASSAGES, n_tune),
                                            ("idkmrc-check", check, len(check), n_check)):
            docs, items = _sample(passages, n_pass, n_q, SEED)
            settings = Settings(_env_file=None, data_dir=Path(tmp) / name, redis_url=None)
            manager, _ = build_jsonl_index(settings, docs, embedder)
            embedder = manager.embedder
            print(f"fit: {len(items)} {name} questions over {len(docs)} passages …", file=sys.stderr, flush=True)
            rows += asyncio.run(_ask(_pipeline(settings, manager), items, name))
        with SampleSite() as site:
            settings = Settings(_env_file=None, data_dir=Path(tmp) / "site", site_seeds=[site.base_url + "/"],
                                crawl_allow_private_networks=True, crawl_delay_seconds=0.0, redis_url=None)
            manager, _, _ = build_fresh_index(settings)
            items = [json.loads(x) for x in DEV_SET.read_text(encoding="utf-8").splitlines() if x.strip()]
            items = [it for it in items if it.get("answerable", True) and it.get("answers") and not it.get("conversation")]
            rows += asyncio.run(_ask(_pipeline(settings, manager), items, "sample-site-dev"))
    return rows


def _usable(rows: Sequence[dict[str, Any]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per question: the candidates' components and gold flags, headings and page questions (score -1) left out;
    only questions with at least one gold-containing candidate."""
    out = []
    for r in rows:
        keep = [i for i, s in enumerate(r["scores"]) if s != -1.0]
        gold = np.asarray([r["gold"][i] for i in keep], dtype=bool)
        if keep and gold.any():
            out.append((np.asarray([r["components"][i] for i in keep], dtype=np.float64), gold))
    return out


def top1(rows: Sequence[dict[str, Any]], weights: np.ndarray) -> dict[str, float]:
    """The share of questions (all asked, and those with a gold-containing candidate) whose best-scored citable
    sentence contains a gold span."""
    hit = reachable = 0
    for r in rows:
        keep = [i for i, s in enumerate(r["scores"]) if s != -1.0]
        if not keep:
            continue
        reachable += any(r["gold"][i] for i in keep)
        scores = [float(np.asarray(r["components"][i]) @ weights) for i in keep]
        hit += bool(r["gold"][keep[int(np.argmax(scores))]])
    n = len(rows)
    return {"questions": n, "reachable": reachable, "top1": round(hit / max(n, 1), 4),
            "top1_of_reachable": round(hit / max(reachable, 1), 4)}


def fit_weights(rows: Sequence[dict[str, Any]], *, l2: float = 1.0, iterations: int = 3000) -> np.ndarray:
    """Conditional-logit weights (L2-penalised, gradient descent with a decaying step), rescaled so that the
    lexical, embedding and chunk weights sum to 1 like the hand weights (the ranking does not change)."""
    data = _usable(rows)
    d = len(data[0][0][0])
    w = np.zeros(d)
    lr = 0.5
    for it in range(iterations):
        grad = l2 * w / max(len(data), 1)
        for x, gold in data:
            z = x @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            target = gold / gold.sum()
            grad += x.T @ (p - target) / len(data)
        w -= lr / (1 + it / 500) * grad
    return w


def rescale(w: np.ndarray, names: Sequence[str]) -> np.ndarray:
    total = sum(w[names.index(f)] for f in FIXED)
    return w / total if total > 0 else w


def cross_validated(rows: Sequence[dict[str, Any]], *, l2: float, folds: int = 5) -> dict[str, float]:
    order = random.Random(SEED).sample(range(len(rows)), len(rows))
    hits = {"questions": 0, "reachable": 0, "hit": 0.0}
    for f in range(folds):
        test = [rows[i] for k, i in enumerate(order) if k % folds == f]
        train = [rows[i] for k, i in enumerate(order) if k % folds != f]
        r = top1(test, fit_weights(train, l2=l2))
        hits["questions"] += r["questions"]
        hits["reachable"] += r["reachable"]
        hits["hit"] += r["top1"] * r["questions"]
    return {"questions": hits["questions"], "reachable": hits["reachable"],
            "top1": round(hits["hit"] / max(hits["questions"], 1), 4),
            "top1_of_reachable": round(hits["hit"] / max(hits["reachable"], 1), 4)}


def main(argv: Sequence[str] | None = None) -> int:
    from generation.pipeline import EVIDENCE_COMPONENTS, EVIDENCE_WEIGHTS

    parser = argparse.ArgumentParser(prog="python -m bench.fit_evidence", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tune", type=int, default=TUNE_QUESTIONS)
    parser.add_argument("--check", type=int, default=CHECK_QUESTIONS)
    parser.add_argument("--raw", type=Path, help="write the candidate rows here (JSON lines)")
    parser.add_argument("--from-raw", type=Path, help="fit from rows written by --raw")
    parser.add_argument("--l2", default="0.1,1,10", help="L2 strengths to choose from, out of fold on the tune split")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.from_raw:
        rows = [json.loads(x) for x in args.from_raw.read_text(encoding="utf-8").splitlines() if x.strip()]
    else:
        rows = collect(args.tune, args.check)
        if args.raw:
            args.raw.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    names = list(EVIDENCE_COMPONENTS)
    hand = np.asarray([EVIDENCE_WEIGHTS[c] for c in names])
    part = {s: [r for r in rows if r["source"] == s] for s in ("idkmrc-tune", "idkmrc-check", "sample-site-dev")}
    l2s = [float(x) for x in args.l2.split(",") if x.strip()]
    cv = {l2: cross_validated(part["idkmrc-tune"], l2=l2) for l2 in l2s}
    best = max(l2s, key=lambda l2: cv[l2]["top1"])
    fitted = rescale(fit_weights(part["idkmrc-tune"], l2=best), names)
    report = {
        "components": names,
        "hand": {"weights": dict(zip(names, hand.round(4).tolist(), strict=True)),
                 **{s: top1(r, hand) for s, r in part.items()}},
        "fitted": {"weights": dict(zip(names, fitted.round(4).tolist(), strict=True)), "l2": best,
                   "tune_out_of_fold": cv[best], **{s: top1(r, fitted) for s, r in part.items()}},
        "l2_out_of_fold": {str(k): v for k, v in cv.items()},
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
