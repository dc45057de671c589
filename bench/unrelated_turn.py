"""A question asked after another, unrelated one: does it get the answer it gets on its own?

Students ask one thing, then another. Every single-turn item of the sample-site sets (dev, informal, blind set A;
blind set B stays unread) is asked twice: on its own, and after the question of another item of the same set (a
fixed-seed derangement, the bot's own reply to it in the history, as ``make eval`` plays a conversation). The items
were written to stand alone, so their gold answers hold after any earlier turn; a follow-up layer that takes a
complete question for a follow-up of the turn before it shows up as a changed outcome.

    python -m bench.unrelated_turn [--out FILE.json] [--sets dev,informal,holdout] [--seed 7]

It prints, per set, the outcomes on their own and after the unrelated turn, and how many items changed outcome
(right → not right and back); ``--out`` writes every item's two outcomes as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from bench.eval_sets import ANSWERS_SET, HOLDOUT_SET, INFORMAL_SET, load_set

SETS = {"dev": ANSWERS_SET.name, "informal": INFORMAL_SET.name, "holdout": HOLDOUT_SET.name}
OUTCOMES = ("correct", "wrong", "abstained", "refused", "answered")
RIGHT = frozenset({"correct", "refused"})  # an answerable item answered with its gold, an unanswerable one refused


def derangement(n: int, seed: int) -> list[int]:
    """A permutation of range(n) (fixed seed) that moves every position: item i is asked after item perm[i]."""
    if n < 2:
        raise ValueError("an unrelated turn needs at least two items")
    rng = random.Random(seed)
    while True:
        perm = list(range(n))
        rng.shuffle(perm)
        if all(p != i for i, p in enumerate(perm)):
            return perm


def single_turn(name: str) -> list[dict[str, Any]]:
    items = load_set(SETS[name])
    return [it for it in items if not it.get("conversation")]


def run(sets: list[str], seed: int) -> dict[str, list[dict[str, Any]]]:
    from bench.evaluation import answer_item, build_fresh_index, site_settings
    from bot import wiring
    from bot.sample_site import SampleSite
    from generation.evaluation import outcome

    out: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="prodi-unrelated-") as tmp, SampleSite() as site:
        settings = site_settings(site.base_url, Path(tmp) / "data", answerer="reader")
        manager, _, _ = build_fresh_index(settings)

        async def go() -> None:
            pool = wiring.build_llm_pool(settings)
            pipeline = wiring.build_pipeline(settings, index_manager=manager, pool=pool)
            try:
                for name in sets:
                    items = single_turn(name)
                    perm = derangement(len(items), seed)
                    rows = []
                    for n, (item, before) in enumerate(zip(items, (items[p] for p in perm), strict=True), 1):
                        alone = await answer_item(pipeline, manager.current, item)
                        after = await answer_item(pipeline, manager.current,
                                                  {**item, "conversation": [str(before["query"])]})
                        row = {"id": item["id"], "after": before["id"], "alone": outcome(alone),
                               "after_outcome": outcome(after), "same_reply": alone.answer == after.answer}
                        rows.append(row)
                        print(f"  [{name} {n}/{len(items)}] {item['id']} after {before['id']}: {row['alone']} → "
                              f"{row['after_outcome']}", file=sys.stderr, flush=True)
                    out[name] = rows
            finally:
                pool.close()

        asyncio.run(go())
    return out


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    alone, after = Counter(r["alone"] for r in rows), Counter(r["after_outcome"] for r in rows)
    return {"items": len(rows), "alone": {o: alone[o] for o in OUTCOMES if alone[o]},
            "after": {o: after[o] for o in OUTCOMES if after[o]},
            "changed": sum(r["alone"] != r["after_outcome"] for r in rows),
            "right_lost": sum(r["alone"] in RIGHT and r["after_outcome"] not in RIGHT for r in rows),
            "right_gained": sum(r["alone"] not in RIGHT and r["after_outcome"] in RIGHT for r in rows),
            "reply_changed": sum(not r["same_reply"] for r in rows)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="dev,informal,holdout")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    sets = [s for s in args.sets.split(",") if s]
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        ap.error(f"unknown set {', '.join(unknown)}; valid: {', '.join(SETS)} (blind set B stays unread)")
    rows = run(sets, args.seed)
    report = {name: summary(r) for name, r in rows.items()}
    print(json.dumps(report, ensure_ascii=False, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": report, "items": rows}, ensure_ascii=False, indent=1) + "\n",
                                  encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
