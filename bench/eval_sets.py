"""The project's question sets (``tests/data/eval/``) and the one reader of their JSONL files: one JSON object per
non-blank line. Every bench script reads the sets through here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["ANSWERS_SET", "DIALOGUES_SET", "EVAL_DIR", "FINAL_SET", "HOLDOUT_SET", "INFORMAL_SET", "RETRIEVAL_SET",
           "ROOT", "load_items", "load_set"]

ROOT = Path(__file__).resolve().parents[1]
EVAL_DIR = ROOT / "tests" / "data" / "eval"
RETRIEVAL_SET = EVAL_DIR / "retrieval.jsonl"
ANSWERS_SET = EVAL_DIR / "answers.jsonl"  # the dev set
INFORMAL_SET = EVAL_DIR / "informal.jsonl"
HOLDOUT_SET = EVAL_DIR / "informal_holdout.jsonl"  # blind set A
FINAL_SET = EVAL_DIR / "informal_final.jsonl"  # blind set B: never read to choose anything
DIALOGUES_SET = EVAL_DIR / "dialogues.jsonl"


def load_items(path: Path | str) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file, one per non-blank line, in file order. A line that is not JSON stops it with
    a ValueError naming the file and the line."""
    out = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}, line {number}: not a JSON object ({exc.msg})") from exc
    return out


def load_set(name: str) -> list[dict[str, Any]]:
    """The items of one of the question sets by its file name (``"answers.jsonl"``)."""
    return load_items(EVAL_DIR / name)
