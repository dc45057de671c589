"""A site's own operating threshold for the reader's gate (``python -m bot calibrate`` with ``ANSWERER=reader``).

The shipped threshold was chosen on the IDK-MRC tune split's dev part (``bench/train_reader.py``). A site refits it
on its own labelled questions: every question is answered with the gate off, each reply is labelled (does it carry a
gold span?), and the lowest threshold that refuses the target share of the unanswerable questions is kept
(``generation.calibration.choose_threshold``, the same rule as the previous gate's refit)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from generation.calibration import LabelledReply, OperatingPoint, choose_threshold, operating_point

__all__ = ["fit_threshold", "load_threshold", "save_threshold", "threshold_figures"]


def threshold_figures(replies: Sequence[LabelledReply], threshold: float) -> OperatingPoint:
    return operating_point([r.reader_probability() for r in replies], [r.answerable for r in replies],
                           [r.correct for r in replies], threshold)


def fit_threshold(replies: Sequence[LabelledReply], target_refusal: float = 0.8) -> OperatingPoint:
    if not replies:
        raise ValueError("no labelled replies to fit the reader's threshold on")
    return choose_threshold([r.reader_probability() for r in replies], [r.answerable for r in replies],
                            [r.correct for r in replies], target_refusal=target_refusal)


def save_threshold(path: Path, point: OperatingPoint, meta: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"threshold": round(point.threshold, 6), "figures": point.as_json(),
            "fitted_at": time.strftime("%Y-%m-%d"), **meta}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def load_threshold(path: Path) -> float | None:
    """The threshold in ``path``, or None when there is no such file. A broken file raises ValueError."""
    if not path.is_file():
        return None
    try:
        value = float(json.loads(path.read_text(encoding="utf-8"))["threshold"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path} is not a reader threshold file ({error}); refit it with "
                         "`python -m bot calibrate --dataset FILE`") from None
    if not 0.0 <= value <= 1.0 + 1e-6:
        raise ValueError(f"{path}: threshold {value} is outside 0..1; refit it with `python -m bot calibrate`")
    return value
