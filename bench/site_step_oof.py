"""What the reader's in-domain step does to site questions it did not see: read the sample site's dev and informal
sets (and blind set A) with several reader directories, the gate off, and report each one's answers out of fold.

The in-domain step (``bench.train_reader_site``) trains on the dev and informal sets' single-turn items, so the
shipped reader's figures on them are in-sample. ``--folds 2 --fold K`` trains a step without fold K; reading fold
K's items with that reader measures the step on questions it never saw. This script reads, for every reader
directory given, every item of the sets (the pipeline with ``abstention="off"``, so each reply shows what the reader
chose and the gate's probability in the trace), and reports per subset:

- ``foldK``: the single-turn dev and informal items of fold K (out of sample for a step trained without fold K,
  and for a reader without any step);
- ``A``: blind set A (``informal_holdout.jsonl``), out of sample for every step;
- ``multi_turn``: the dev and informal sets' multi-turn items (the step never trains on them).

For each: right answers with the gate off, the AUC of the gate's probability for right answers against answered
unanswerable questions, and (right answers, unanswerable refused) at each threshold of ``--thresholds``. Blind set
B (``informal_final.jsonl``) is never read here: it is reported once, by ``make eval``.

    python -m bench.train_reader --out /tmp/pre --work /tmp/work           # the main run, once
    cp -r /tmp/pre /tmp/f0 && python -m bench.train_reader_site --out /tmp/f0 --work /tmp/work --folds 2 --fold 0
    cp -r /tmp/pre /tmp/f1 && python -m bench.train_reader_site --out /tmp/f1 --work /tmp/work --folds 2 --fold 1
    python -m bench.site_step_oof --reader none=/tmp/pre --reader step=/tmp/f0:0 --reader step=/tmp/f1:1

``NAME=DIR:K`` names a reader trained without fold K (it is read on fold K only); ``NAME=DIR`` a reader without a
step (read on every fold). Readers of one name are pooled over their folds. A step that also trained on blind set A
(``bench.train_reader_site --sets answers.jsonl,informal.jsonl,informal_holdout.jsonl --fold-sets
informal_holdout.jsonl --folds 2 --fold K``: its ``reader.json`` names the sets and the folded ones) is read only on
the items it did not see: A's fold K (subset ``A, out of fold``, pooled over the name's readers) and the dev and
informal sets' multi-turn items, not their single-turn ones, which it trained on whole. The chunk selector, threshold and int8
setting of every directory are the bundled model's (``--selector-from``), so only the reader's weights differ.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import functools
import json
import shutil
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.eval_sets import load_set
from bench.fit_abstention import auc as fit_auc
from bench.train_reader_site import BLIND_A, SETS, site_fold
from generation.reader.reader import CONFIG_FILE, DEFAULT_DIR, ReaderConfig

READ_SETS = (*SETS, BLIND_A)  # never informal_final.jsonl (blind set B)
FOLDS = 2


@dataclasses.dataclass(frozen=True)
class ReaderSpec:
    name: str
    path: Path
    left_out: int | None  # the fold its step did not see; None: no step (every fold is out of sample)

    @functools.cached_property
    def step_sets(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(the sets its step trained on, the sets it left fold ``left_out`` out of), from its ``reader.json``; a
        directory whose step does not name them trained on the dev and informal sets, folded both."""
        meta = json.loads((self.path / CONFIG_FILE).read_text(encoding="utf-8")).get("site_step") or {}
        sets = tuple(meta.get("sets") or SETS)
        return sets, tuple((meta.get("left_out_fold") or {}).get("sets") or sets)

    def reads(self, set_name: str, item: dict[str, Any]) -> bool:
        """Whether the item is out of sample for this reader (a reader named without a fold reads every item)."""
        if self.left_out is None:
            return True
        sets, folded = self.step_sets
        if set_name not in sets:
            return True
        in_fold = set_name in folded and site_fold(str(item["id"]), FOLDS) == self.left_out
        if set_name == BLIND_A:
            return in_fold  # each of A's items once over the name's readers (its multi-turn ones too)
        return in_fold or bool(item.get("conversation"))  # a step never trains on multi-turn items


def parse_reader(text: str) -> ReaderSpec:
    name, _, rest = text.partition("=")
    if not name or not rest:
        raise argparse.ArgumentTypeError(f"--reader {text!r}: expected NAME=DIR or NAME=DIR:K")
    path, _, fold = rest.rpartition(":") if rest.rsplit(":", 1)[-1].isdigit() else (rest, "", "")
    return ReaderSpec(name, Path(path), int(fold) if fold else None)


def subset_of(set_name: str, item: dict[str, Any]) -> str:
    if set_name == BLIND_A:
        return "A"
    if item.get("conversation"):
        return "multi_turn"
    return f"fold{site_fold(str(item['id']), FOLDS)}"


def read_items(limit: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """(set name, item) of every item of ``READ_SETS`` (``limit``: the first N of each set)."""
    out = []
    for name in READ_SETS:
        items = load_set(name)
        out += [(name, item) for item in (items[:limit] if limit else items)]
    return out


def with_selector(spec: ReaderSpec, source: Path, tmp: Path) -> str:
    """A copy of the reader directory whose chunk selector, threshold and int8 settings are ``source``'s (a main run
    exports float32, the in-domain step int8: without this the readers would differ in more than their weights)."""
    target = tmp / f"{spec.name}-{spec.left_out}"
    shutil.copytree(spec.path, target)
    shipped = json.loads((source / CONFIG_FILE).read_text(encoding="utf-8"))["config"]
    meta = json.loads((target / CONFIG_FILE).read_text(encoding="utf-8"))
    for key in ("chunk_weights", "chunk_bias", "threshold", "int8"):
        meta["config"][key] = shipped[key]
    # the width the source's threshold runs with, named or by default
    meta["config"]["int8_weight_bits"] = ReaderConfig.from_json(shipped).int8_weight_bits
    (target / CONFIG_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return str(target)


class _Traced:
    """The pipeline, keeping the last reply's trace (``answer_item`` returns the reply without it)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.steps = inner, []

    async def answer(self, query: str, history: list[Any]) -> Any:
        reply = await self.inner.answer(query, history)
        self.steps = reply.trace.steps if reply.trace else []
        return reply


async def read_all(specs: Sequence[ReaderSpec], items: Sequence[tuple[str, dict[str, Any]]], settings: Any,
                   manager: Any, selector_from: Path, tmp: Path) -> list[dict[str, Any]]:
    from bench.evaluation import answer_item
    from bot import wiring
    from generation.evaluation import outcome
    from generation.pipeline import AnswerPipeline

    pool = wiring.build_llm_pool(settings)
    rows = []
    try:
        for spec in specs:
            cfg = dataclasses.replace(wiring.build_pipeline_config(settings), answerer="reader", abstention="off",
                                      reader_model_dir=with_selector(spec, selector_from, tmp))
            traced = _Traced(AnswerPipeline(manager.current, pool, cfg, manager.embedder))
            for set_name, item in items:
                if not spec.reads(set_name, item):
                    continue  # in-sample for this reader's step
                subset = subset_of(set_name, item)
                if subset == "A" and spec.left_out is not None and set_name in spec.step_sets[0]:
                    subset = "A, out of fold"  # its step trained on A's other fold
                result = await answer_item(traced, manager.current, item)
                gate = next((s for s in traced.steps if s.get("step") == "reader_gate"), {})
                rows.append({"reader": spec.name, "left_out": spec.left_out, "subset": subset, "id": result.id,
                             "answerable": result.answerable, "outcome": outcome(result), "p": gate.get("p")})
            print(f"site_step_oof: read with {spec.name} ({spec.path})", file=sys.stderr, flush=True)
    finally:
        pool.close()
    return rows


def auc(positive: Sequence[float], negative: Sequence[float]) -> float | None:
    """``bench.fit_abstention.auc`` of the two groups (ties count half); None, not 0.5, when a group is empty."""
    if not positive or not negative:
        return None
    return round(fit_auc([*positive, *negative], [True] * len(positive) + [False] * len(negative)), 4)


def figures(rows: Sequence[dict[str, Any]], thresholds: Sequence[float]) -> dict[str, Any]:
    """A reply without a gate probability (the facts lookup answered) is answered at every threshold."""
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    right = [r for r in answerable if r["outcome"] == "correct"]
    answered = [r for r in unanswerable if r["outcome"] == "answered"]
    points = {}
    for t in thresholds:
        points[f"{t:g}"] = {
            "correct": sum(1 for r in right if r["p"] is None or r["p"] >= t),
            "refused": sum(1 for r in unanswerable if r["outcome"] == "refused" or (r["p"] is not None and r["p"] < t))}
    return {"answerable": len(answerable), "unanswerable": len(unanswerable), "correct_gate_off": len(right),
            "gate_auc": auc([r["p"] for r in right if r["p"] is not None],
                            [r["p"] for r in answered if r["p"] is not None]),
            "at_threshold": points}


def report(rows: Sequence[dict[str, Any]], thresholds: Sequence[float]) -> dict[str, Any]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["subset"].startswith("fold") or r["subset"] == "A, out of fold":
            groups[(r["reader"], r["subset"])].append(r)
            if r["subset"].startswith("fold"):
                groups[(r["reader"], "folds pooled")].append(r)
        else:  # every fold's reader reads A and the multi-turn items: each reader's reading is its own row
            held = "" if r["left_out"] is None else f", reader without fold {r['left_out']}"
            groups[(r["reader"], r["subset"] + held)].append(r)
    out: dict[str, dict[str, Any]] = defaultdict(dict)
    for (reader, subset), group in sorted(groups.items()):
        out[reader][subset] = figures(group, thresholds)
    return dict(out)


def markdown(rep: dict[str, Any]) -> str:
    lines = ["| reader | subset | answerable + unanswerable | right, gate off | gate AUC | right / refused at "
             "each threshold |", "|---|---|---|---|---|---|"]
    for reader, subsets in rep.items():
        for subset, f in subsets.items():
            points = ", ".join(f"{t}: {p['correct']} / {p['refused']}" for t, p in f["at_threshold"].items())
            lines.append(f"| {reader} | {subset} | {f['answerable']} + {f['unanswerable']} | {f['correct_gate_off']} "
                         f"| {f['gate_auc'] if f['gate_auc'] is not None else '–'} | {points} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reader", type=parse_reader, action="append", required=True,
                    help="NAME=DIR (no step) or NAME=DIR:K (a step trained without fold K); repeatable")
    ap.add_argument("--selector-from", type=Path, default=DEFAULT_DIR,
                    help="the reader directory whose chunk selector and threshold every reader uses")
    ap.add_argument("--thresholds", default="0.1,0.15,0.2,0.25,0.3,0.4")
    ap.add_argument("--limit", type=int, default=0, help="only the first N items of each set (a smoke run)")
    ap.add_argument("--out", type=Path, help="also write the rows and the report as JSON here")
    args = ap.parse_args(argv)
    from bench.evaluation import build_fresh_index, site_settings
    from bot.sample_site import SampleSite

    thresholds = [float(t) for t in args.thresholds.split(",") if t.strip()]
    items = read_items(args.limit)
    with tempfile.TemporaryDirectory(prefix="prodi-site-oof-") as tmp, SampleSite() as site:
        settings = site_settings(site.base_url, Path(tmp) / "data")
        manager, _, _ = build_fresh_index(settings)
        rows = asyncio.run(read_all(args.reader, items, settings, manager, args.selector_from, Path(tmp)))
    rep = report(rows, thresholds)
    print(markdown(rep))
    if args.out:
        args.out.write_text(json.dumps({"report": rep, "rows": rows}, indent=1, ensure_ascii=False) + "\n",
                            encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
