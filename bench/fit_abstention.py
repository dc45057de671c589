"""Fit the bundled abstention model (generation/data/abstention.json) on data the team did not write.

Data: the IDK-MRC *tune* split (bench/idkmrc.py; never the check split) — a fixed-seed subset of its passages, about
the size of the check split, indexed as their own corpus, and a fixed-seed sample of their questions, half
answerable and half unanswerable — plus the sample site's dev set (tests/data/eval/answers.jsonl). Each question is
answered by the real pipeline (default LLM) with the gate off; its signals and whether the reply carries the gold
span are the training rows (generation.calibration.label_replies). The informal set and the IDK-MRC check split
are never used here: they are where the result is reported.

    python -m bench.fit_abstention                       # label (≈ 15 min on 2 cores), fit, write the model
    python -m bench.fit_abstention --raw rows.jsonl      # also keep the labelled rows
    python -m bench.fit_abstention --from-raw rows.jsonl # refit from kept rows without asking again
    python -m bench.fit_abstention --from-raw rows.jsonl --select-features
                                                         # keep only the signals that transfer between sources

The shipped model: ``python -m bench.fit_abstention --from-raw rows.jsonl --monotone --base-rate-from sample-site-dev``
(the signals' weights learned from both sources, the base rate from the sample site's; docs/answers.md).
The IDK-MRC index's own model (the per-index choice `make eval` reports on the check split, as `python -m bot
calibrate` makes one for a site): ``… --from-raw rows.jsonl --monotone --sources idkmrc-tune --out
bench/idkmrc_tune_abstention.json``.

``--select-features`` (select_features): a model fitted on one source (IDK-MRC tune) ranks the replies of the other
(the sample-site dev set) and vice versa; signals are dropped, one at a time, while the mean out-of-source AUC does
not fall. A signal that tells right from wrong only on Wikipedia prose (or only on one site) is noise on a new site.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench import idkmrc
from bench.eval_sets import ANSWERS_SET, load_items

ROOT = Path(__file__).resolve().parents[1]
SEED = 20261122  # fixed: the same passages and questions on every run
TUNE_PASSAGES = 700  # about the size of the check split (its own corpus, so retrieval is as hard as there)
PER_CLASS = 200  # answerable and unanswerable questions asked from those passages
TARGET_REFUSAL = 0.8  # the target: refuse ≥ 80% of unanswerable questions


def _sample_tune(passages: int, per_class: int) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    tune, _ = idkmrc.split(idkmrc.load_passages())
    rng = random.Random(SEED)
    chosen = rng.sample(list(tune), min(passages, len(tune)))
    docs = idkmrc.documents(chosen)
    answerable = idkmrc.items(chosen, answerable=True)
    unanswerable = idkmrc.items(chosen, answerable=False)
    pos = rng.sample(answerable, min(per_class, len(answerable)))
    neg = rng.sample(unanswerable, min(per_class, len(unanswerable)))
    # interleaved, so that a run stopped early (its rows are written as they come) is still balanced
    picked = [it for pair in zip(pos, neg, strict=False) for it in pair] + pos[len(neg):] + neg[len(pos):]
    return docs, picked


async def _label(settings: Any, manager: Any, items: Sequence[dict[str, Any]], pool: Any,
                 on_reply: Any = None) -> list[Any]:
    from bot import wiring
    from generation.calibration import label_replies

    pipeline = wiring.build_pipeline(settings, manager, pool=pool, embedder=manager.embedder)
    return await label_replies(pipeline, items, on_reply)


def _writer(path: Path | None, source: str) -> Any:
    """Appends each labelled reply to ``path`` as it comes (the rows survive a stopped run)."""
    from generation.support import SOFT_ANCHOR_WEIGHT

    if path is None:
        return None

    def write(reply: Any) -> None:
        row = {"source": source, "soft_weight": SOFT_ANCHOR_WEIGHT, **asdict(reply)}
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return write


def label_all(passages: int, per_class: int, dev: bool = True, raw: Path | None = None) -> list[dict[str, Any]]:
    """Index and ask; returns the labelled rows (JSON-ready) with their source, also appended to ``raw`` one by
    one when given."""
    from bench.evaluation import build_fresh_index, site_settings
    from bot import wiring
    from bot.cmd_retrieval import load_jsonl_corpus
    from bot.sample_site import SampleSite
    from bot.settings import Settings
    from generation.support import SOFT_ANCHOR_WEIGHT

    docs, items = _sample_tune(passages, per_class)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="prodi-fit-") as tmp:
        corpus = Path(tmp) / "tune.jsonl"
        corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
        settings = Settings(_env_file=None, data_dir=Path(tmp) / "idk", redis_url=None, abstention="off")
        documents, chunks = load_jsonl_corpus(corpus, settings)
        manager = wiring.build_index_manager(settings)
        manager.build(chunks, documents)
        pool = wiring.build_llm_pool(settings)
        try:
            started = time.perf_counter()
            print(f"fit: {len(items)} IDK-MRC tune questions over {len(docs)} passages …", file=sys.stderr, flush=True)
            replies = asyncio.run(_label(settings, manager, items, pool, _writer(raw, "idkmrc-tune")))
            rows += [{"source": "idkmrc-tune", "soft_weight": SOFT_ANCHOR_WEIGHT, **asdict(r)} for r in replies]
            print(f"fit: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
            if dev:
                with SampleSite() as site:
                    s2 = site_settings(site.base_url, Path(tmp) / "site")
                    site_manager, _, _ = build_fresh_index(s2)
                    replies = asyncio.run(_label(s2, site_manager, load_items(ANSWERS_SET), pool,
                                                 _writer(raw, "sample-site-dev")))
                    rows += [{"source": "sample-site-dev", "soft_weight": SOFT_ANCHOR_WEIGHT, **asdict(r)} for r in replies]
        finally:
            pool.close()
    return rows


def _replies(rows: Sequence[dict[str, Any]], soft_weight: float | None = None) -> list[Any]:
    """Rows → LabelledReply, their anchor features recomputed for ``soft_weight`` (None: as labelled)."""
    from generation.calibration import LabelledReply, reweigh_anchors

    out = []
    for r in rows:
        fields = {k: v for k, v in r.items() if k not in ("source", "soft_weight")}
        if soft_weight is not None and fields.get("features") is not None and fields.get("anchors"):
            fields["features"] = reweigh_anchors(fields["features"], fields["anchors"], soft_weight,
                                                 float(r.get("soft_weight", 0.2)))
        out.append(LabelledReply(**fields))
    return out


def _reweighed(rows: Sequence[dict[str, Any]], soft_weight: float | None) -> list[dict[str, Any]]:
    """The rows with their anchor features recomputed for ``soft_weight`` (None: as labelled)."""
    if soft_weight is None:
        return list(rows)
    return [{**row, "features": rep.features} for row, rep in zip(rows, _replies(rows, soft_weight), strict=True)]


def balanced(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each source weighing the same: the rows of the smaller sources repeated up to the largest one's count (the
    sample site's 52 dev questions are not drowned by hundreds of Wikipedia questions, whose unanswerable ones
    are adversarial: same words as the passage, so coverage signals mean little there)."""
    by_source: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_source.setdefault(r["source"], []).append(r)
    biggest = max(len(v) for v in by_source.values())
    out: list[dict[str, Any]] = []
    for part in by_source.values():
        reps = max(1, round(biggest / len(part)))
        out += [r for r in part for _ in range(reps)]
    return out


def cross_validated(rows: Sequence[dict[str, Any]], *, soft_weight: float | None, monotone: bool, l2: float,
                    target: float, folds: int = 5, balance: bool = False) -> dict[str, float]:
    """Out-of-fold figures: each fold's probabilities come from a model fitted on the other folds; one threshold
    is then chosen over all out-of-fold probabilities for the target (so the figures are not in-sample)."""
    import numpy as np

    from generation.calibration import Calibrator, choose_threshold

    replies = _replies(rows, soft_weight)
    order = random.Random(SEED).sample(range(len(replies)), len(replies))
    fold_of = {i: k % folds for k, i in enumerate(order)}
    p = np.zeros(len(replies))
    for f in range(folds):
        train_rows = [row for i, row in enumerate(rows) if fold_of[i] != f]
        train_rows = balanced(train_rows) if balance else train_rows
        train = [r for r in _replies(train_rows, soft_weight) if r.features is not None]
        model = Calibrator.fit([r.features for r in train], [r.answerable for r in train], [r.correct for r in train],
                               l2=l2, target_refusal=target, monotone=monotone)
        for i, r in enumerate(replies):
            if fold_of[i] == f:
                p[i] = r.probability(model)
    if balance:  # the threshold and the figures over the sources weighing the same
        reps = {id(r): 0 for r in rows}
        for r in balanced(rows):
            reps[id(r)] += 1
        keep = [i for i, r in enumerate(rows) for _ in range(reps[id(r)])]
        p = p[keep]
        replies = [replies[i] for i in keep]
    point = choose_threshold(p, [r.answerable for r in replies], [r.correct for r in replies], target_refusal=target)
    return point.as_json()


def auc(scores: Sequence[float], positive: Sequence[bool]) -> float:
    """Probability that a random positive scores above a random negative (ties count half); 0.5 if a class is
    empty."""
    pos = [s for s, y in zip(scores, positive, strict=True) if y]
    neg = [s for s, y in zip(scores, positive, strict=True) if not y]
    if not pos or not neg:
        return 0.5
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


def transfer(rows: Sequence[dict[str, Any]], features: Sequence[str], *, l2: float, monotone: bool = False
             ) -> dict[str, float]:
    """Out-of-source ranking quality: for each source, a model fitted on the *other* sources scores its replies;
    the AUC of "this reply carries the gold span" (replies that reached the gate). A signal that only works on
    Wikipedia prose, or only on the sample site, does not survive this."""
    from generation.calibration import Calibrator

    out: dict[str, float] = {}
    for source in sorted({r["source"] for r in rows}):
        train = [r for r in _replies([r for r in rows if r["source"] != source]) if r.features is not None]
        test = [r for r in _replies([r for r in rows if r["source"] == source]) if r.features is not None]
        if not train or not test:
            continue
        model = Calibrator.fit([r.features for r in train], [r.answerable for r in train], [r.correct for r in train],
                               features=features, l2=l2, monotone=monotone)
        p = model.probabilities([r.features for r in test])
        out[source] = auc(list(p), [r.answerable and r.correct for r in test])
    return out


def select_features(rows: Sequence[dict[str, Any]], features: Sequence[str], *, l2: float, monotone: bool = False
                    ) -> tuple[list[str], list[dict[str, Any]]]:
    """Backward elimination by :func:`transfer`: drop the signal whose removal raises the mean out-of-source AUC
    the most, while that mean does not fall (a tie drops the signal: fewer signals transfer better); (the kept
    signals, the path with each step's per-source AUC)."""
    current = list(features)
    scores = transfer(rows, current, l2=l2, monotone=monotone)
    best = sum(scores.values()) / max(len(scores), 1)
    path: list[dict[str, Any]] = [{"dropped": None, "features": list(current), **scores, "mean": round(best, 4)}]
    while len(current) > 1:
        trials = []
        for f in current:
            cand = [g for g in current if g != f]
            t = transfer(rows, cand, l2=l2, monotone=monotone)
            trials.append((sum(t.values()) / max(len(t), 1), f, t, cand))
        score, dropped, t, cand = max(trials, key=lambda x: x[0])
        if score < best - 1e-9:
            break
        best, current = score, cand
        path.append({"dropped": dropped, "features": list(current), **{k: round(v, 4) for k, v in t.items()},
                     "mean": round(best, 4)})
    return current, path


def select(rows: Sequence[dict[str, Any]], soft_weights: Sequence[float], *, l2: float, target: float,
           balance: bool = False) -> tuple[float, bool, list[dict[str, Any]]]:
    """The soft-anchor weight and the sign constraint with the most correct answers at the refusal target,
    out of fold; (weight, monotone, the table)."""
    table = []
    for w in soft_weights:
        for mono in (False, True):
            cv = cross_validated(rows, soft_weight=w, monotone=mono, l2=l2, target=target, balance=balance)
            table.append({"soft_weight": w, "monotone": mono, **cv})
    best = max(table, key=lambda t: (round(t["correct_answerable"], 6), t["monotone"], -abs(t["soft_weight"] - 0.2)))
    return float(best["soft_weight"]), bool(best["monotone"]), table


def fit(rows: Sequence[dict[str, Any]], *, l2: float, target: float, soft_weight: float | None = None,
        monotone: bool = False, selection: list[dict[str, Any]] | None = None, balance: bool = False,
        features: Sequence[str] | None = None, feature_path: list[dict[str, Any]] | None = None,
        base_rate_from: str | None = None) -> tuple[Any, dict[str, Any]]:
    """Fit the shipped model on labelled rows. ``base_rate_from``: a source indicator joins the fit (each source
    its own base rate, the signals' weights shared) and is then folded into the bias at that source's value, so the
    model keeps that source's base rate (:func:`fold_source`); the threshold is the one chosen with every source at
    its own base rate."""
    from generation.calibration import FEATURES, figures, refit

    sources = sorted({r["source"] for r in rows})
    fit_rows = balanced(rows) if balance else list(rows)
    replies = _replies(fit_rows, soft_weight)
    meta = {"fitted_on": {s: sum(1 for r in rows if r["source"] == s) for s in sources}, "seed": SEED,
            "fitted_at": time.strftime("%Y-%m-%d"), "script": "python -m bench.fit_abstention"}
    if soft_weight is not None:
        meta["soft_anchor_weight"] = soft_weight
    if selection:
        meta["selection_out_of_fold"] = selection
    meta["sources_weigh_the_same"] = balance
    if feature_path:
        meta["features_selected_out_of_source"] = feature_path
    feats = tuple(features or FEATURES)
    if base_rate_from:
        # one indicator per row: does it come from the source whose base rate the shipped model keeps?
        replies = [dataclasses.replace(r, features=None if r.features is None else
                                       {**r.features, SOURCE_FEATURE: float(row["source"] == base_rate_from)})
                   for r, row in zip(replies, fit_rows, strict=True)]
        feats = (*feats, SOURCE_FEATURE)
        meta["base_rate_from"] = base_rate_from
    model, _ = refit(replies, target_refusal=target, l2=l2, meta=meta, monotone=monotone, features=feats)
    if base_rate_from:
        model = fold_source(model)
    report: dict[str, Any] = {"overall": figures(replies, model).as_json()}
    for s in sources:
        part = [rep for rep, row in zip(_replies(rows, soft_weight), rows, strict=True) if row["source"] == s]
        report[s] = {"n": len(part), "gate_off": figures(part, None, 0.5).as_json(), "fitted": figures(part, model).as_json()}
    return model, report


SOURCE_FEATURE = "source_indicator"


def fold_source(model: Any) -> Any:
    """The model with :data:`SOURCE_FEATURE` removed and its effect at value 1 added to the bias."""
    from generation.calibration import Calibrator

    j = model.features.index(SOURCE_FEATURE)
    shift = model.weights[j] * (1.0 - model.mean[j]) / model.scale[j]
    keep = [i for i in range(len(model.features)) if i != j]
    weights = [model.weights[i] for i in keep] + [model.weights[-1] + shift]
    meta = {**model.meta, "source_indicator_weight": round(float(model.weights[j]), 6)}
    return Calibrator(tuple(model.features[i] for i in keep), tuple(model.mean[i] for i in keep),
                      tuple(model.scale[i] for i in keep), tuple(float(w) for w in weights), model.threshold, meta)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fit_abstention", description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=TUNE_PASSAGES)
    parser.add_argument("--per-class", type=int, default=PER_CLASS)
    parser.add_argument("--raw", type=Path, help="write the labelled rows here (JSON lines)")
    parser.add_argument("--from-raw", type=Path, help="fit from rows written by --raw instead of asking again")
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--target-refusal", type=float, default=TARGET_REFUSAL)
    parser.add_argument("--out", type=Path, default=ROOT / "generation" / "data" / "abstention.json")
    parser.add_argument("--no-dev", action="store_true", help="IDK-MRC tune rows only")
    parser.add_argument("--one-source-dominates", action="store_true",
                        help="fit on the rows as they are (default: every source weighs the same, see balanced())")
    parser.add_argument("--soft-weights", default="",
                        help="comma-separated soft-anchor weights to choose from out of fold (e.g. 0,0.1,0.2,0.5,1), "
                             "with and without sign constraints; default: the weight the rows were labelled with")
    parser.add_argument("--monotone", action="store_true",
                        help="keep every weight's expected sign (without --soft-weights, which chooses it out of fold)")
    parser.add_argument("--base-rate-from", default="",
                        help="keep this source's base rate (e.g. sample-site-dev): the signals' weights are learned "
                             "from every source, the bias from this one (fit(base_rate_from=…))")
    parser.add_argument("--sources", default="",
                        help="fit on these sources' rows only (comma-separated, e.g. idkmrc-tune: the IDK-MRC index's "
                             "own model, as `python -m bot calibrate` fits one for a site; bench/idkmrc_tune_abstention.json)")
    parser.add_argument("--select-features", action="store_true",
                        help="keep only the signals that hold out of source (select_features: fitted on one source, "
                             "ranked on the other)")
    args = parser.parse_args(argv)
    if args.from_raw:
        rows = load_items(args.from_raw)
    else:
        if args.raw:
            args.raw.write_text("", encoding="utf-8")
        rows = label_all(args.passages, args.per_class, dev=not args.no_dev, raw=args.raw)
    if args.sources:
        wanted = {x.strip() for x in args.sources.split(",") if x.strip()}
        rows = [r for r in rows if r["source"] in wanted]
        if not rows:
            parser.error(f"no rows from {', '.join(sorted(wanted))}")
    soft, mono, table = None, bool(args.monotone), None
    if args.soft_weights:
        soft, mono, table = select(rows, [float(w) for w in args.soft_weights.split(",") if w.strip()],
                                   l2=args.l2, target=args.target_refusal, balance=not args.one_source_dominates)
        from generation.support import SOFT_ANCHOR_WEIGHT

        if soft != SOFT_ANCHOR_WEIGHT:
            print(f"fit: the chosen soft-anchor weight is {soft}; set generation.support.SOFT_ANCHOR_WEIGHT to it",
                  file=sys.stderr)
    features, path = None, None
    if args.select_features:
        from generation.calibration import FEATURES

        features, path = select_features(_reweighed(rows, soft), FEATURES, l2=args.l2, monotone=mono)
        print(f"fit: signals kept out of source: {', '.join(features)}", file=sys.stderr)
    model, report = fit(rows, l2=args.l2, target=args.target_refusal, soft_weight=soft, monotone=mono, selection=table,
                        balance=not args.one_source_dominates, features=features, feature_path=path,
                        base_rate_from=args.base_rate_from or None)
    model.save(args.out)
    print(json.dumps({"model": str(args.out), "threshold": round(model.threshold, 4), "report": report},
                     ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
