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
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench import idkmrc

ROOT = Path(__file__).resolve().parents[1]
DEV_SET = ROOT / "tests" / "data" / "eval" / "answers.jsonl"
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
    picked = rng.sample(answerable, min(per_class, len(answerable))) + rng.sample(unanswerable, min(per_class, len(unanswerable)))
    return docs, picked


def _load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


async def _label(settings: Any, manager: Any, items: Sequence[dict[str, Any]], pool: Any) -> list[Any]:
    from bot import wiring
    from generation.calibration import label_replies

    pipeline = wiring.build_pipeline(settings, manager, pool=pool, embedder=manager.embedder)
    return await label_replies(pipeline, items)


def label_all(passages: int, per_class: int, dev: bool = True) -> list[dict[str, Any]]:
    """Index and ask; returns the labelled rows (JSON-ready) with their source."""
    from bench.evaluation import build_fresh_index
    from bot import wiring
    from bot.cmd_retrieval import load_jsonl_corpus
    from bot.sample_site import SampleSite
    from bot.settings import Settings

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
            replies = asyncio.run(_label(settings, manager, items, pool))
            rows += [{"source": "idkmrc-tune", **asdict(r)} for r in replies]
            print(f"fit: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
            if dev:
                with SampleSite() as site:
                    s2 = Settings(_env_file=None, data_dir=Path(tmp) / "site", site_seeds=[site.base_url + "/"],
                                  crawl_allow_private_networks=True, crawl_delay_seconds=0.0, redis_url=None)
                    site_manager, _, _ = build_fresh_index(s2)
                    replies = asyncio.run(_label(s2, site_manager, _load_jsonl(DEV_SET), pool))
                    rows += [{"source": "sample-site-dev", **asdict(r)} for r in replies]
        finally:
            pool.close()
    return rows


def fit(rows: Sequence[dict[str, Any]], *, l2: float, target: float) -> tuple[Any, dict[str, Any]]:
    from generation.calibration import LabelledReply, figures, refit

    replies = [LabelledReply(**{k: v for k, v in r.items() if k != "source"}) for r in rows]
    sources = sorted({r["source"] for r in rows})
    meta = {"fitted_on": {s: sum(1 for r in rows if r["source"] == s) for s in sources}, "seed": SEED,
            "fitted_at": time.strftime("%Y-%m-%d"), "script": "python -m bench.fit_abstention"}
    model, _ = refit(replies, target_refusal=target, l2=l2, meta=meta)
    report: dict[str, Any] = {"overall": figures(replies, model).as_json()}
    for s in sources:
        part = [rep for rep, row in zip(replies, rows, strict=True) if row["source"] == s]
        report[s] = {"n": len(part), "gate_off": figures(part, None, 0.5).as_json(), "fitted": figures(part, model).as_json()}
    return model, report


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
    args = parser.parse_args(argv)
    if args.from_raw:
        rows = _load_jsonl(args.from_raw)
    else:
        rows = label_all(args.passages, args.per_class, dev=not args.no_dev)
        if args.raw:
            args.raw.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    model, report = fit(rows, l2=args.l2, target=args.target_refusal)
    model.save(args.out)
    print(json.dumps({"model": str(args.out), "threshold": round(model.threshold, 4), "report": report},
                     ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
