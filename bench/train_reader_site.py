"""The reader's small in-domain step: study-programme pages are "Label: value" rows and lists, which IDK-MRC's
Wikipedia prose never shows, so after training on IDK-MRC the reader takes a short second step on the sample site.

Data (each item's gold spans, never its reply): the sample-site **dev** set (``tests/data/eval/answers.jsonl``) and the
**informal** set (``informal.jsonl``), single-turn items only. Both blind sets (``informal_holdout.jsonl``,
``informal_final.jsonl``) and the IDK-MRC check split stay held out. The sample site is crawled and indexed as
``make eval`` does; each question's top chunks (as the pipeline would read them) become windows: the first
occurrence of a gold span in a chunk is the target, a chunk without one (and every chunk of an unanswerable
question) teaches "no answer". With ``--informal P`` a share P of the questions also appears written as students type
(the external colloquial lexicon's spellings, ``with_informal_copies``); out of fold that beat the step without the
copies, but end to end it lost both with the shipped reader's gate kept and with its own gate refitted
(docs/answers.md), so the default is 0. An equal number of IDK-MRC train windows is replayed in every epoch, so
the step does not forget the prose it learned (their frozen-layer states come from the main run's cache).

    python -m bench.train_reader_site     # after bench.train_reader; then bench.fit_reader_gate, bench.reader_card

To measure what the step does to questions it did not see, ``--folds 2 --fold K --out DIR`` (DIR a copy of the
main run's export) trains without the items of fold K (by a hash of the item id; ``site_fold``), so fold K's
questions, read with DIR's reader, are out of sample for it. ``--sets`` names the sets the step trains on (blind
set A, ``informal_holdout.jsonl``, may be one of them; blind set B, ``informal_final.jsonl``, never), and
``--fold-sets`` the sets a fold is left out of (default: all of them), so a step can train on all of the dev and
informal sets and half of A and be measured on A's other half (``bench.site_step_oof``).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.eval_sets import ANSWERS_SET, FINAL_SET, HOLDOUT_SET, INFORMAL_SET, load_set
from bench.train_reader import ROOT, Window
from generation.reader.e5file import E5File
from generation.reader.reader import DEFAULT_DIR, ReaderConfig, windows_for

SETS = (ANSWERS_SET.name, INFORMAL_SET.name)  # dev and informal (the default); the blind sets are held out
BLIND_A, BLIND_B = HOLDOUT_SET.name, FINAL_SET.name
SITE_SETS = (*SETS, BLIND_A)  # what a step may train on: never blind set B


def site_fold(item_id: str, folds: int) -> int:
    """The fold of an in-domain item (``--folds``): by a hash of its id, so a fold never depends on file order."""
    return int(hashlib.sha1(item_id.encode("utf-8")).hexdigest(), 16) % folds


def check_sets(sets: Sequence[str], fold_sets: Sequence[str] | None = None) -> None:
    """Stop with a message unless every set is one a step may train on and every folded set is one of them."""
    unknown = [name for name in sets if name not in SITE_SETS]
    if unknown or not sets:
        raise SystemExit(f"--sets {','.join(sets)}: a step trains on some of {', '.join(SITE_SETS)} "
                         "(blind set B, informal_final.jsonl, is never trained on)")
    stray = [name for name in fold_sets or () if name not in sets]
    if stray:
        raise SystemExit(f"--fold-sets {','.join(stray)}: a fold can only be left out of a set the step trains on")


def step_items(sets: Sequence[str] = SETS, folds: int = 0, fold: int = 0,
               fold_sets: Sequence[str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(set, item) for the single-turn items a step trains on; with ``folds``, the items of fold ``fold`` of the sets
    in ``fold_sets`` (default: every set) are left out, so a step can be measured on them."""
    check_sets(sets, fold_sets)
    folded = set(sets if fold_sets is None else fold_sets)
    out = []
    for name in sets:
        for item in load_set(name):
            left_out = folds and name in folded and site_fold(str(item["id"]), folds) == fold
            if not item.get("conversation") and not left_out:
                out.append((name, item))
    return out


def site_examples(chunks_per_question: int, folds: int = 0, fold: int = 0, limit: int = 0,
                  sets: Sequence[str] = SETS,
                  fold_sets: Sequence[str] | None = None) -> list[tuple[str, str, list[str], bool]]:
    """(question as the reader sees it, chunk text, gold spans, answerable) for the in-domain items of ``sets``;
    with ``folds``, the items of fold ``fold`` are left out (``step_items``); ``limit``: only the first N items (a
    smoke run)."""
    from bench.evaluation import build_fresh_index, site_settings
    from bot.sample_site import SampleSite

    items = [item for _, item in step_items(sets, folds, fold, fold_sets)]
    items = items[:limit] if limit else items
    out = []
    with tempfile.TemporaryDirectory(prefix="prodi-reader-site-") as tmp, SampleSite() as site:
        settings = site_settings(site.base_url, Path(tmp) / "data")
        manager, _, _ = build_fresh_index(settings)
        index = manager.current()
        for item in items:
            query = str(item["query"])
            question = index.normalize_query(query, expand=False)
            hits = index.search(index.normalize_query(query), chunks_per_question, "hybrid").hits
            golds = [str(g) for g in item.get("answers") or [] if str(g).strip()]
            for hit in hits:
                out.append((question, str(hit.text), golds if item.get("answerable", True) else [],
                            bool(item.get("answerable", True))))
    return out


def with_informal_copies(examples: list[tuple[str, str, list[str], bool]], share: float,
                         seed: int) -> list[tuple[str, str, list[str], bool]]:
    """The step's rows plus, for a share of its questions (fixed seed), a copy of each of their rows with the question
    written as students type (``bench.train_reader.as_students_type``: the external lexicon's spellings): more ways
    of asking the same thing, so the step learns the page rather than the sentence."""
    if share <= 0:
        return list(examples)
    from bench.train_reader import as_students_type, informal_spellings

    rng, spellings = random.Random(seed), informal_spellings()
    rewritten: dict[str, str] = {}
    for question in dict.fromkeys(q for q, _, _, _ in examples):
        if rng.random() < share:
            rewritten[question] = as_students_type(question, rng, spellings)
    return list(examples) + [(rewritten[q], c, g, a) for q, c, g, a in examples if q in rewritten]


def featurize_site(e5: E5File, cfg: ReaderConfig, examples) -> list[Window]:
    feats = []
    for n, (question, passage, golds, answerable) in enumerate(examples):
        lower = passage.lower()
        at = next(((lower.find(g.lower()), len(g)) for g in golds if lower.find(g.lower()) >= 0), None) if answerable else None
        for win in windows_for(e5, cfg, question, passage):
            start = end = 0
            if at is not None:
                a0, a1 = at[0], at[0] + at[1]
                offs = win.offsets
                inside = np.nonzero(offs[:, 0] >= 0)[0]
                s = [i for i in inside if offs[i, 0] <= a0 < offs[i, 1]]
                e = [i for i in inside if offs[i, 0] < a1 <= offs[i, 1]]
                if s and e and e[0] >= s[0]:
                    start, end = int(s[0]), int(e[0])
            feats.append(Window(f"site-{n}", win.ids, win.offsets, start, end))
    return feats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(DEFAULT_DIR))
    ap.add_argument("--work", default=str(ROOT / ".cache" / "reader-train"))
    ap.add_argument("--chunks", type=int, default=3, help="top chunks per question (READER_CHUNKS)")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--folds", type=int, default=0,
                    help="with --fold K: leave the in-domain items of fold K out (to measure the step on them)")
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument("--sets", default=",".join(SETS),
                    help=f"comma-separated sets the step trains on, of {','.join(SITE_SETS)}")
    ap.add_argument("--fold-sets", default=None,
                    help="comma-separated sets --folds leaves a fold out of (default: every set of --sets)")
    ap.add_argument("--smoke", type=int, default=0, help="only the first N in-domain items (CI smoke run)")
    ap.add_argument("--informal", type=float, default=0.0,
                    help="share of the step's questions that gain a copy written as students type (the lexicon; "
                         "docs/answers.md has what 1.0 did)")
    ap.add_argument("--float32", action="store_true",
                    help="ship the projections in float32 (default: int8 at run time, as the gate is fitted)")
    args = ap.parse_args(argv)
    sets = [name.strip() for name in args.sets.split(",") if name.strip()]
    fold_sets = None if args.fold_sets is None else [n.strip() for n in args.fold_sets.split(",") if n.strip()]
    check_sets(sets, fold_sets)
    held_out = [name for name in (*SITE_SETS, BLIND_B) if name not in sets]
    from bench.reader_card import CardError, main_run_log, write_card

    # the step writes over a copy of the main run's export and its card from that run's log: check both first
    work, out_dir = Path(args.work), Path(args.out)
    if not (out_dir / "reader.json").is_file():
        raise SystemExit(f"{out_dir / 'reader.json'} is missing: --out must be the main run's export (or a copy of "
                         "the whole directory) from `python -m bench.train_reader`")
    try:
        main_run_log(out_dir)
    except CardError as error:
        raise SystemExit(str(error)) from None

    import torch

    from bench import reader_torch as tm

    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    log_path = out_dir / "train_log.jsonl"
    started = time.time()

    def log(**row: object) -> None:
        row = {"t": round(time.time() - started, 1), **row}
        print(json.dumps(row, ensure_ascii=False), flush=True)
        with open(log_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    meta = json.loads((out_dir / "reader.json").read_text(encoding="utf-8"))
    # the shipped reader runs its projections in int8 (docs/answers.md); its selector and threshold are fitted so
    cfg = dataclasses.replace(ReaderConfig.from_json(meta["config"]), int8=not args.float32)
    e5 = E5File()
    examples = with_informal_copies(site_examples(args.chunks, args.folds, args.fold, args.smoke, sets, fold_sets),
                                    args.informal, args.seed)
    feats = featurize_site(e5, cfg, examples)
    lower = tm.Lower(e5, cfg.frozen_layers).eval()
    states = tm.run_lower(lower, [w.ids for w in feats])
    # the main run's own data: its cache of the frozen layers and its train part (a smoke run's few questions)
    main_run = json.loads((work / "signature.json").read_text(encoding="utf-8"))
    cache_file = work / f"cache-{cfg.frozen_layers}-{cfg.max_len}-{main_run.get('smoke', 0)}.pt"
    replay_cache = torch.load(cache_file)["train"]
    state = torch.load(work / "state.pt", weights_only=False)
    upper = tm.Upper(e5, cfg.frozen_layers)
    upper.load_state_dict(state["model"])
    # the replayed IDK-MRC windows need their own Window records: rebuild them as the main run did
    from bench.train_reader import featurize, run_examples

    idk = featurize(e5, cfg, run_examples(main_run)["train"])
    if len(idk) != len(replay_cache) or any(len(w.ids) != c.shape[0] for w, c in zip(idk, replay_cache, strict=False)):
        raise SystemExit(f"the main run's train windows could not be rebuilt as it made them ({len(idk)} rebuilt, "
                         f"{len(replay_cache)} cached in {cache_file}): its data options are {main_run}")
    log(event="site_data", sets=sets, held_out=[*held_out, "IDK-MRC check"],
        examples=len(examples), windows=len(feats), with_span=sum(w.start > 0 for w in feats),
        replay_per_epoch=min(len(feats), len(idk)), args=vars(args), from_step=state["step"])
    opt = torch.optim.AdamW(upper.parameters(), lr=args.lr, weight_decay=0.01)
    for epoch in range(args.epochs):
        replay = rng.sample(range(len(idk)), min(len(feats), len(idk)))
        pool = [("site", i) for i in range(len(feats))] + [("idk", i) for i in replay]
        rng.shuffle(pool)
        upper.train()
        t0, total = time.time(), 0.0
        for k in range(0, len(pool), args.batch):
            batch = pool[k:k + args.batch]
            cache = [states[i] if src == "site" else replay_cache[i] for src, i in batch]
            recs = [feats[i] if src == "site" else idk[i] for src, i in batch]
            loss = tm.loss_for(upper, cache, recs, list(range(len(batch))))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(upper.parameters(), 1.0)
            opt.step()
            opt.zero_grad()
            total += float(loss.detach())
        log(event="site_epoch", epoch=epoch + 1, seconds=round(time.time() - t0, 1),
            loss=round(total / max(1, (len(pool) + args.batch - 1) // args.batch), 4))
    upper.eval()
    tm.export(upper, cfg, out_dir)
    meta_new = json.loads((out_dir / "reader.json").read_text(encoding="utf-8"))
    meta_new["site_step"] = {"sets": sets, "held_out": held_out, "windows": len(feats), "epochs": args.epochs,
                             "lr": args.lr, "informal": args.informal}
    if args.folds:
        meta_new["site_step"]["left_out_fold"] = {"folds": args.folds, "fold": args.fold,
                                                  "sets": sets if fold_sets is None else fold_sets}
    (out_dir / "reader.json").write_text(json.dumps(meta_new, indent=2) + "\n", encoding="utf-8")
    write_card(out_dir)
    log(event="site_exported", seconds=round(time.time() - started, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
