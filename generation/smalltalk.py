"""Small talk is not a question: a small trained classifier tells greetings, thanks, apologies, goodbyes,
acknowledgements, "who are you / what can you do" and chatter outside the study program from questions, so
ChatService answers them with a short reply instead of running retrieval on "halo" or "makasih".

The model is a multinomial logistic regression over character n-grams (1–4, inside word boundaries: each word
padded with a space on either side), word unigrams (punctuation and emoji count as words) and the message's
length in words, each present feature counted once and the vector scaled to unit length. It is trained by
``python -m bench.train_smalltalk`` (``make train-smalltalk``) on questions the team did not write (IDK-MRC) and
small-talk utterances generated from a seed of phrases with the colloquial lexicon's spellings; the data, the
metrics on the held-out parts and the limits are in ``generation/data/smalltalk/MODEL_CARD.md``.

Routing is cautious: a message is small talk only when the model gives the small-talk classes together at least
the threshold chosen on the dev split (``1 - p(question) >= threshold``) and it is no longer than the longest
small talk seen in training; anything else, uncertain messages included, goes to the answer pipeline as before.
Numpy only at run time; the artifact is one ``.npz`` read without pickle.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = [
    "DEFAULT_PATH", "INTENTS", "QUESTION", "SmallTalk", "SmallTalkClassifier", "default_classifier", "featurize",
    "normalize", "tokens",
]

QUESTION = "question"
# the small-talk intents, in the artifact's order after "question"; "salam" is the Islamic greeting
# (assalamualaikum), answered "Wa'alaikumsalam"; "chitchat" is chatter outside the study program (moods,
# wishes, everyday life)
INTENTS = ("greeting", "salam", "thanks", "apology", "goodbye", "ack", "identity", "capability", "chitchat")
DEFAULT_PATH = Path(__file__).with_name("data") / "smalltalk" / "smalltalk.npz"

_REPEAT = re.compile(r"(.)\1{2,}")
_TOKEN = re.compile(r"\w+(?:[-']\w+)*|[^\w\s]")
_SPACE = re.compile(r"\s+")
LENGTH_BUCKETS = 8  # "n=1" … "n=8" (eight words or more)


def normalize(text: str) -> str:
    """NFKC, case-folded, a character repeated three or more times kept twice ("halooo" → "haloo"), spaces
    collapsed. Variation selectors and zero-width joiners go (they split an emoji into several symbols)."""
    text = unicodedata.normalize("NFKC", text or "").casefold()
    text = "".join(ch for ch in text if ch not in "\ufe0e\ufe0f\u200d")
    return _SPACE.sub(" ", _REPEAT.sub(r"\1\1", text)).strip()


def tokens(text: str) -> list[str]:
    """Words (hyphenated and apostrophe forms whole: "sama-sama", "wa'alaikumsalam") and single symbols."""
    return _TOKEN.findall(normalize(text))


def featurize(text: str, *, ngram_min: int = 1, ngram_max: int = 4, word_pairs: bool = False) -> list[str]:
    """The message's distinct features, in a fixed order: ``w=`` words and symbols, ``c=`` character n-grams of
    each word padded with spaces, ``n=`` the number of words (capped at 8), and with ``word_pairs`` ``b=`` each
    two neighbouring words ("kamu ini" against "prodi ini": the word alone cannot tell them apart)."""
    toks = tokens(text)
    feats: dict[str, None] = {}
    words = 0
    previous = ""
    for tok in toks:
        feats["w=" + tok] = None
        if not tok[0].isalnum() and tok[0] != "_":
            continue
        words += 1
        if word_pairs and previous:
            feats[f"b={previous} {tok}"] = None
        previous = tok
        padded = f" {tok} "
        for n in range(ngram_min, ngram_max + 1):
            for i in range(len(padded) - n + 1):
                gram = padded[i:i + n]
                if gram.strip():
                    feats["c=" + gram] = None
    feats[f"n={min(max(words, 1), LENGTH_BUCKETS)}"] = None
    return list(feats)


@dataclass(frozen=True, slots=True)
class SmallTalk:
    """The decision on one message: ``intent`` is one of INTENTS, or "question" (the pipeline answers it).
    ``confidence`` is the probability of small talk (all small-talk classes together)."""

    intent: str
    confidence: float

    @property
    def is_smalltalk(self) -> bool:
        return self.intent != QUESTION


class SmallTalkClassifier:
    """The trained model. ``classify(text)`` → :class:`SmallTalk`; ``probabilities(text)`` for the training
    script and the tests."""

    def __init__(self, vocab: Iterable[str], weights: np.ndarray, bias: np.ndarray, classes: Iterable[str], *,
                 threshold: float, max_chars: int, ngram_min: int = 1, ngram_max: int = 4, word_pairs: bool = False,
                 meta: dict[str, object] | None = None) -> None:
        self.vocab = {f: i for i, f in enumerate(vocab)}
        self.weights = np.asarray(weights, dtype=np.float32)
        self.bias = np.asarray(bias, dtype=np.float32)
        self.classes = tuple(classes)
        if self.weights.shape != (len(self.vocab), len(self.classes)) or self.bias.shape != (len(self.classes),):
            raise ValueError("small-talk model: weights do not match the vocabulary and classes")
        if QUESTION not in self.classes:
            raise ValueError("small-talk model: no 'question' class")
        self.question_index = self.classes.index(QUESTION)
        self.threshold = float(threshold)
        self.max_chars = int(max_chars)
        self.ngram_min, self.ngram_max = int(ngram_min), int(ngram_max)
        self.word_pairs = bool(word_pairs)
        self.meta = dict(meta or {})

    # --- the artifact ---------------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path = DEFAULT_PATH) -> SmallTalkClassifier:
        """Read the ``.npz`` that ``bench.train_smalltalk`` writes (no pickle)."""
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                config = json.loads(bytes(data["config"]).decode("utf-8"))
                vocab = bytes(data["vocab"]).decode("utf-8").split("\n")
                return cls(vocab, data["weights"], data["bias"], config["classes"], threshold=config["threshold"],
                           max_chars=config["max_chars"], ngram_min=config["ngram"][0],
                           ngram_max=config["ngram"][1], word_pairs=bool(config.get("word_pairs", False)),
                           meta=config)
        except (OSError, KeyError, ValueError) as error:
            raise ValueError(f"small-talk model {path}: {error}") from error

    def save(self, path: str | Path, **meta: object) -> None:
        config = {**self.meta, **meta, "classes": list(self.classes), "threshold": self.threshold,
                  "max_chars": self.max_chars, "ngram": [self.ngram_min, self.ngram_max],
                  "word_pairs": self.word_pairs}
        vocab = sorted(self.vocab, key=self.vocab.__getitem__)
        np.savez_compressed(
            Path(path),
            vocab=np.frombuffer("\n".join(vocab).encode("utf-8"), dtype=np.uint8),
            weights=self.weights.astype(np.float32),
            bias=self.bias.astype(np.float32),
            config=np.frombuffer(json.dumps(config, ensure_ascii=False, sort_keys=True).encode("utf-8"),
                                 dtype=np.uint8),
        )

    # --- scoring --------------------------------------------------------------------------------------------
    def _indices(self, text: str) -> list[int]:
        feats = featurize(text, ngram_min=self.ngram_min, ngram_max=self.ngram_max, word_pairs=self.word_pairs)
        return [i for i in (self.vocab.get(f) for f in feats) if i is not None]

    def probabilities(self, text: str) -> dict[str, float]:
        """Each class's probability (softmax over the linear scores)."""
        idx = self._indices(text)
        logits = self.bias.astype(np.float64)
        if idx:
            logits = logits + self.weights[idx].sum(axis=0, dtype=np.float64) / np.sqrt(len(idx))
        logits -= logits.max()
        p = np.exp(logits)
        p /= p.sum()
        return {c: float(v) for c, v in zip(self.classes, p, strict=True)}

    def classify(self, text: str) -> SmallTalk:
        """Small talk when ``1 - p(question) >= threshold`` and the message is no longer than ``max_chars``;
        the intent is then the most probable small-talk class. Else "question"."""
        text = (text or "").strip()
        if not text or len(text) > self.max_chars:
            return SmallTalk(QUESTION, 0.0)
        probs = self.probabilities(text)
        smalltalk = 1.0 - probs[QUESTION]
        if smalltalk < self.threshold:
            return SmallTalk(QUESTION, smalltalk)
        intent = max((c for c in self.classes if c != QUESTION), key=probs.__getitem__)
        return SmallTalk(intent, smalltalk)


@lru_cache(maxsize=1)
def default_classifier() -> SmallTalkClassifier:
    """The bundled model, loaded once per process."""
    return SmallTalkClassifier.load(DEFAULT_PATH)
