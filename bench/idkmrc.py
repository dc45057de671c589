"""IDK-MRC (Indonesian Wikipedia reading comprehension) as tuning and check data for retrieval and answers.

The data is the IDK-MRC *train* split (Putri & Oh, EMNLP 2022; github.com/rifkiaputri/IDK-MRC,
``dataset/idk_mrc/train.json`` at commit e79b427a), shipped read-only in ``../shared/data/idk-mrc-train/train.json``
next to the repository. It is a list of ``{"context", "qas": [{"id", "question", "is_impossible", "answers":
[{"text", "answer_start"}]}]}``: 3,659 passages, 9,332 questions, 4,290 of them unanswerable (written to look
answerable from the passage). The IDK-MRC validation and test splits are not used anywhere.

**The split (fixed, never changes).** By passage: a passage and all its questions go to the *check* side when
``int(sha1(context as UTF-8).hexdigest(), 16) % 5 == 0``, else to the *tune* side. The rule depends on the passage
text alone (not on file order or a random generator), so it is the same on every machine, for every caller, and
for any subset of the file. Tune constants on ``tune``; report on ``check`` once, never tune on it. (Passages cut
from one Wikipedia article are separate passages here and can fall on different sides: the data carries no
article id.)

API (small on purpose; other tools import it)::

    passages = load_passages()            # all passages, in file order; IDKMRC_TRAIN or path= overrides the file
    tune, check = split(passages)         # the fixed 80/20 split above
    documents(tune)                       # JSONL documents {"id","url","title","text"} for `python -m bot index`
    items(tune)                           # eval items for `python -m bot eval retrieval|answers`

Document ids are ``idk-<n>`` with ``n`` the passage's position in train.json, URLs ``idkmrc:idk-<n>``, titles
empty (the data has none). Every question's ``relevant_doc_ids`` is the passage it was written from, unanswerable
ones included (their category is ``unanswerable``, ``answerable`` is false and ``answers`` is empty).

CLI::

    python -m bench.idkmrc export --split tune|check --out DIR [--train FILE]

writes ``DIR/docs.jsonl`` and ``DIR/questions.jsonl`` and prints the counts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_TRAIN", "Passage", "Question", "documents", "is_check", "items", "load_passages", "split", "train_path",
]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TRAIN = ROOT.parent / "shared" / "data" / "idk-mrc-train" / "train.json"
ENV_VAR = "IDKMRC_TRAIN"
CHECK_MODULUS = 5  # 1 in 5 hash buckets → about 20% of the passages on the check side


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    question: str
    answerable: bool
    answers: tuple[str, ...]  # distinct gold answer texts, in file order (empty when unanswerable)


@dataclass(frozen=True, slots=True)
class Passage:
    n: int  # position in train.json
    context: str
    questions: tuple[Question, ...]

    @property
    def doc_id(self) -> str:
        return f"idk-{self.n}"

    @property
    def url(self) -> str:
        return f"idkmrc:{self.doc_id}"


def train_path(path: str | os.PathLike[str] | None = None) -> Path:
    """The train.json to read: ``path`` if given, else ``$IDKMRC_TRAIN``, else ``../shared/data/idk-mrc-train/``."""
    chosen = path or os.environ.get(ENV_VAR) or DEFAULT_TRAIN
    return Path(chosen)


def load_passages(path: str | os.PathLike[str] | None = None) -> list[Passage]:
    """Every passage of IDK-MRC train.json with its questions, in file order.

    Raises FileNotFoundError naming the path (and how to point elsewhere) when the file is missing, ValueError
    when it is not the IDK-MRC format.
    """
    file = train_path(path)
    if not file.is_file():
        raise FileNotFoundError(
            f"IDK-MRC train.json not found at {file}; put the IDK-MRC train split there, or point to it with "
            f"{ENV_VAR}=/path/to/train.json (or --train FILE)"
        )
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
        passages = []
        for n, entry in enumerate(raw):
            questions = []
            for qa in entry["qas"]:
                answerable = not bool(qa["is_impossible"])
                golds = tuple(dict.fromkeys(a["text"].strip() for a in qa.get("answers") or [] if a["text"].strip()))
                questions.append(Question(str(qa["id"]), " ".join(str(qa["question"]).split()), answerable,
                                          golds if answerable else ()))
            passages.append(Passage(n, str(entry["context"]), tuple(questions)))
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{file} is not IDK-MRC's format [{{\"context\", \"qas\": [...]}}] ({error!r})") from None
    return passages


def is_check(context: str) -> bool:
    """True when a passage belongs to the check side (the fixed sha1 rule in the module docstring)."""
    return int(hashlib.sha1(context.encode("utf-8")).hexdigest(), 16) % CHECK_MODULUS == 0


def split(passages: Sequence[Passage]) -> tuple[list[Passage], list[Passage]]:
    """``(tune, check)``: about 80% / 20% of the passages, each with all its questions, order kept."""
    tune, check = [], []
    for passage in passages:
        (check if is_check(passage.context) else tune).append(passage)
    return tune, check


def documents(passages: Iterable[Passage]) -> list[dict[str, str]]:
    """One ``{"id","url","title","text"}`` document a passage (what ``python -m bot index --from-jsonl`` reads)."""
    return [{"id": p.doc_id, "url": p.url, "title": "", "text": p.context} for p in passages]


def items(passages: Iterable[Passage], *, answerable: bool | None = None) -> list[dict[str, object]]:
    """Eval items ``{"id","query","category","relevant_doc_ids","answers","answerable","reference_answer"}``.

    ``answerable=True`` / ``False`` keeps only that kind; ``None`` keeps all. ``reference_answer`` is the first
    gold answer ("" for unanswerable questions), ``category`` is ``"answerable"`` or ``"unanswerable"``.
    """
    out: list[dict[str, object]] = []
    for p in passages:
        for q in p.questions:
            if answerable is not None and q.answerable != answerable:
                continue
            out.append({
                "id": q.id,
                "query": q.question,
                "category": "answerable" if q.answerable else "unanswerable",
                "relevant_doc_ids": [p.doc_id],
                "answers": list(q.answers),
                "answerable": q.answerable,
                "reference_answer": q.answers[0] if q.answers else "",
            })
    return out


def _write_jsonl(path: Path, rows: Iterable[dict[str, object]]) -> int:
    count = 0
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.idkmrc", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    export = sub.add_parser("export", help="write docs.jsonl and questions.jsonl of one side of the split")
    export.add_argument("--split", choices=("tune", "check"), required=True)
    export.add_argument("--out", required=True, help="output directory (created if missing)")
    export.add_argument("--train", help=f"IDK-MRC train.json (default ${ENV_VAR} or {DEFAULT_TRAIN})")
    args = parser.parse_args(argv)
    try:
        passages = load_passages(args.train)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    tune, check = split(passages)
    chosen = tune if args.split == "tune" else check
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    n_docs = _write_jsonl(out / "docs.jsonl", documents(chosen))
    rows = items(chosen)
    n_items = _write_jsonl(out / "questions.jsonl", rows)
    n_ans = sum(1 for r in rows if r["answerable"])
    print(f"{args.split}: {n_docs} passages, {n_items} questions ({n_ans} answerable, {n_items - n_ans} unanswerable) "
          f"→ {out / 'docs.jsonl'}, {out / 'questions.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
