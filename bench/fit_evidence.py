"""Fit how evidence sentences are scored (generation.pipeline.EVIDENCE_WEIGHTS) on data the team did not write.

The answer is quoted from one evidence sentence, so the sentence ranked first decides most replies. This script
asks answerable questions of the IDK-MRC *tune* split (bench/idkmrc.py; the same fixed-seed passages as
bench/fit_abstention.py, indexed as their own corpus) with the LLM off, records every candidate sentence's score
components, and fits the weights as a conditional logit (Newton's method, L2 chosen out of fold): the probability
that a sentence is "the" answer sentence is a softmax of its score over the question's candidates, and the target
spreads over the candidates that contain a gold span. Questions with no gold-containing candidate carry no signal about the choice and are left out.

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
from bench.eval_sets import ANSWERS_SET, INFORMAL_SET, load_items

ROOT = Path(__file__).resolve().parents[1]
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


def _ask_closing(pipeline: Any, items: Sequence[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """Ask, then close the pipeline's (never used) LLM pool so its worker thread does not outlive the source."""
    try:
        return asyncio.run(_ask(pipeline, items, source))
    finally:
        pipeline.pool.close()


def _pipeline(settings: Any, manager: Any) -> Any:
    from dataclasses import replace

    from bot import wiring
    from generation.pipeline import AnswerPipeline

    cfg = replace(wiring.build_pipeline_config(settings), use_llm=False, abstention="off")
    return AnswerPipeline(manager.current, wiring.build_llm_pool(settings), cfg, manager.embedder)


def collect(n_tune: int, n_check: int) -> list[dict[str, Any]]:
    from bench.evaluation import build_fresh_index, build_jsonl_index, site_settings
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
            rows += _ask_closing(_pipeline(settings, manager), items, name)
        with SampleSite() as site:
            settings = site_settings(site.base_url, Path(tmp) / "site")
            manager, _, _ = build_fresh_index(settings)
            for name, path in (("sample-site-dev", ANSWERS_SET), ("sample-site-informal", INFORMAL_SET)):  # informal: reported only
                items = [it for it in load_items(path) if it.get("answerable", True) and it.get("answers") and not it.get("conversation")]
                rows += _ask_closing(_pipeline(settings, manager), items, name)
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


def fit_weights(rows: Sequence[dict[str, Any]], *, l2: float = 1.0, iterations: int = 30) -> np.ndarray:
    """Conditional-logit weights by Newton's method with an L2 penalty (the gradient and Hessian of the softmax
    log-likelihood, summed over questions)."""
    data = _usable(rows)
    d = len(data[0][0][0])
    w = np.zeros(d)
    for _ in range(iterations):
        grad = l2 * w
        hess = l2 * np.eye(d)
        for x, gold in data:
            z = x @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            target = gold / gold.sum()
            grad += x.T @ (p - target)
            hess += x.T @ (x * p[:, None]) - np.outer(x.T @ p, x.T @ p)
        step = np.linalg.solve(hess + 1e-9 * np.eye(d), grad)
        w -= step
        if float(np.max(np.abs(step))) < 1e-7:
            break
    return w


def rescale(w: np.ndarray, names: Sequence[str]) -> np.ndarray:
    total = sum(w[names.index(f)] for f in FIXED)
    return w / total if total > 0 else w


SOURCES = ("idkmrc-tune", "sample-site-dev")  # fitted on (each weighs half); the rest is only reported
REPORTED = ("idkmrc-check", "sample-site-informal")


def _folds(rows: Sequence[dict[str, Any]], folds: int) -> list[int]:
    """A fold per row, assigned within each source (every fold holds its share of every source)."""
    out = [0] * len(rows)
    for src in {r["source"] for r in rows}:
        idx = [i for i, r in enumerate(rows) if r["source"] == src]
        for k, i in enumerate(random.Random(SEED).sample(idx, len(idx))):
            out[i] = k % folds
    return out


def fit_pooled(rows: Sequence[dict[str, Any]], *, l2: float) -> np.ndarray:
    """One fit over several sources, each source weighing the same in the likelihood (a small site set is not
    drowned by thousands of Wikipedia questions): its questions are repeated in proportion."""
    by_source = {src: [r for r in rows if r["source"] == src] for src in {r["source"] for r in rows}}
    biggest = max(len(v) for v in by_source.values())
    pooled: list[dict[str, Any]] = []
    for part in by_source.values():
        reps = max(1, round(biggest / max(len(part), 1)))
        pooled += [r for r in part for _ in range(reps)]
    return fit_weights(pooled, l2=l2 * len(by_source))


def cross_validated(rows: Sequence[dict[str, Any]], weights_for: Any, *, folds: int = 5) -> dict[str, Any]:
    """Out-of-fold top-1 per source and their mean: ``weights_for(train_rows)`` gives the weights for a fold."""
    fold = _folds(rows, folds)
    hit: dict[str, float] = {}
    n: dict[str, int] = {}
    for f in range(folds):
        w = weights_for([r for r, k in zip(rows, fold, strict=True) if k != f])
        for src in {r["source"] for r in rows}:
            test = [r for r, k in zip(rows, fold, strict=True) if k == f and r["source"] == src]
            res = top1(test, w)
            hit[src] = hit.get(src, 0.0) + res["top1"] * res["questions"]
            n[src] = n.get(src, 0) + res["questions"]
    per = {src: round(hit[src] / max(n[src], 1), 4) for src in sorted(hit)}
    return {"per_source": per, "mean": round(sum(per.values()) / max(len(per), 1), 4)}


def main(argv: Sequence[str] | None = None) -> int:
    from generation.pipeline import EVIDENCE_COMPONENTS, EVIDENCE_WEIGHTS

    parser = argparse.ArgumentParser(prog="python -m bench.fit_evidence", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tune", type=int, default=TUNE_QUESTIONS)
    parser.add_argument("--check", type=int, default=CHECK_QUESTIONS)
    parser.add_argument("--raw", type=Path, help="write the candidate rows here (JSON lines)")
    parser.add_argument("--from-raw", type=Path, help="fit from rows written by --raw")
    parser.add_argument("--l2", default="0.1,1,10,100", help="L2 strengths to choose from, out of fold")
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
    fit_rows = [r for r in rows if r["source"] in SOURCES]
    l2s = [float(x) for x in args.l2.split(",") if x.strip()]
    candidates: dict[str, Any] = {"hand": lambda train: hand}
    for l2 in l2s:
        candidates[f"fitted l2={l2:g}"] = lambda train, l2=l2: fit_pooled(train, l2=l2)
    cv = {name: cross_validated(fit_rows, fn) for name, fn in candidates.items()}
    chosen = max(cv, key=lambda name: (cv[name]["mean"], name == "hand"))
    weights = hand if chosen == "hand" else rescale(candidates[chosen](fit_rows), names)
    parts = {s: [r for r in rows if r["source"] == s] for s in (*SOURCES, *REPORTED)}
    report = {
        "components": names,
        "out_of_fold": cv,
        "chosen": chosen,
        "weights": dict(zip(names, weights.round(4).tolist(), strict=True)),
        "hand": {s: top1(r, hand) for s, r in parts.items() if r},
        "chosen_weights": {s: top1(r, weights) for s, r in parts.items() if r},
        "note": f"fitted on {', '.join(SOURCES)} (in-sample there); {', '.join(REPORTED)} never fitted on",
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
