"""Index lifecycle: versioned builds, the atomic ``current`` pointer, hot reload, clear failures.

Layout under the index root (``DATA_DIR/index``)::

    current                 name of the live version (replaced atomically: temp file + os.replace)
    cache/embeddings.sqlite3  passage vectors keyed by (embedder, text hash)
    versions/<name>/        params.json (the embedder's name, dims and calibration_id among the build's facts),
                            chunks.jsonl, vectors.npy, labels.npy, hnsw.bin, bm25.*, facts.sqlite3,
                            aliases.json (the site's abbreviations and lecturer names; optional: older versions
                            without it load with an empty alias table), fusion.json (fusion constants fitted
                            for this corpus by `python -m bot calibrate`; optional, carried to the next build)
    versions/.tmp-<name>/   a build in progress (removed if a build dies half-way)
    versions/.fetch-<name>-*/  a version being downloaded from the shared store (renamed once every checksum matched)
    .build.lock             one build (or fetch) at a time (fcntl lock)

With a shared ``store`` (``VersionStore``: ``storage.pg_index.PgIndexStore`` when DATABASE_URL is PostgreSQL) the
versions travel between hosts that share no disk: a build publishes its version before switching to it (a failed
publish fails the build and the old version keeps serving), and ``sync()`` brings the newest published version here.
Each side keeps the last ``keep_versions`` versions (INDEX_KEEP_VERSIONS).

The steps of a build (vectors, HNSW graph, BM25, facts, aliases, params.json) are in ``retrieval.index_build``;
this module loads and checks versions, moves the pointer and shares versions through the store.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import hnswlib
import numpy as np

from retrieval.aliases import ALIASES_FILE, AliasTable
from retrieval.bm25 import BM25Index
from retrieval.config import RetrievalConfig
from retrieval.embedders import CachedEmbedder
from retrieval.errors import RetrievalError
from retrieval.facts import FactsTable
from retrieval.index_build import FORMAT_VERSION, VersionBuilder, unique_chunks, version_name
from retrieval.search import Reranker, SearchIndex, passage_text
from retrieval.tuning import FUSION_FILE, FusionFit, apply_fusion, load_fusion, save_fusion
from retrieval.types import Embedder, calibration_of
from storage.models import Chunk, Document

__all__ = ["FORMAT_VERSION", "BuildReport", "IndexManager", "IndexUnavailable", "VersionStore"]

logger = logging.getLogger(__name__)

REBUILD_HINT = "rebuild it with `python -m bot index` (or `python -m bot reindex` to crawl first)"
_REQUIRED = ("params.json", "chunks.jsonl", "vectors.npy", "labels.npy", "hnsw.bin", "bm25.npz", "bm25_vocab.json")


class IndexUnavailable(RetrievalError, RuntimeError):
    """The index is missing, partial, corrupted or built for another embedder; the message says how to fix it.
    (Still a RuntimeError, for callers that catch that.)"""


class VersionStore(Protocol):
    """Where index versions travel between hosts (``storage.pg_index.PgIndexStore``). Its errors name what failed."""

    def publish(self, name: str, directory: Path, *, only_if_empty: bool = False) -> Any: ...

    def latest(self) -> str | None: ...

    def fetch(self, name: str, versions_dir: Path) -> Path: ...

    def prune(self, keep: int, *, protect: tuple[str, ...] = ()) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class BuildReport:
    version: str
    total: int
    added: int
    removed: int
    embedded: int
    documents: int
    duration_s: float
    full: bool
    hnsw: str  # "rebuilt" or "incremental"
    facts: dict[str, int] = field(default_factory=dict)
    path: str = ""

    def as_json(self) -> dict[str, object]:
        return {
            "version": self.version,
            "chunks": {"total": self.total, "added": self.added, "removed": self.removed, "embedded": self.embedded},
            "documents": self.documents,
            "duration_s": round(self.duration_s, 3),
            "full": self.full,
            "hnsw": self.hnsw,
            "facts": self.facts,
            "path": self.path,
        }


# --- loading a version -----------------------------------------------------------------------------------------
def _checked_params(path: Path, name: str, embedder: Embedder, config: RetrievalConfig) -> dict[str, Any]:
    """The params.json of version ``name`` at ``path`` once the version is complete and was built in this code's
    format, with ``embedder`` and with ``config``'s BM25 stemming; IndexUnavailable (with the rebuild command)
    otherwise. Warns when the version was fitted for another similarity calibration."""
    missing = [f for f in _REQUIRED if not (path / f).exists()]
    if not path.is_dir() or missing:
        raise IndexUnavailable(
            f"index version {name!r} at {path} is missing or partial (missing: {', '.join(missing) or 'all'}); "
            f"{REBUILD_HINT}."
        )
    try:
        params: dict[str, Any] = json.loads((path / "params.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise IndexUnavailable(f"index version {name!r} has an unreadable params.json ({error}); {REBUILD_HINT}.") from None
    if params.get("format") != FORMAT_VERSION:
        raise IndexUnavailable(
            f"index version {name!r} has format {params.get('format')!r}, this code reads {FORMAT_VERSION}; "
            f"{REBUILD_HINT} --full."
        )
    if params.get("embedder") != embedder.name or params.get("dims") != embedder.dim:
        raise IndexUnavailable(
            f"index version {name!r} was built with embedder {params.get('embedder')!r} "
            f"({params.get('dims')} dims) but EMBEDDER is {embedder.name!r}; rebuild it with "
            "`python -m bot index --full`."
        )
    _check_calibration(name, params, embedder)
    if params.get("analyzer", {}).get("stemming") != config.bm25_stemming:
        raise IndexUnavailable(
            f"index version {name!r} was built with BM25_STEMMING={params.get('analyzer', {}).get('stemming')}; "
            f"{REBUILD_HINT}."
        )
    return params


def _check_calibration(name: str, params: dict[str, Any], embedder: Embedder) -> None:
    """Warn when the version was fitted for another similarity calibration than the embedder's (its fusion
    constants, and the site's thresholds fitted with it, assume that embedder's cosines). A version built
    before the field existed was fitted for its embedder, which ``_checked_params`` already matched by name."""
    recorded = params.get("calibration_id")
    wanted = calibration_of(embedder)
    if recorded is not None and recorded != wanted:
        logger.warning(
            "index version %s was built and fitted for the similarity calibration %r, but EMBEDDER %r is "
            "calibrated as %r: its fusion constants and the thresholds fitted with it may not fit. Rebuild "
            "it with `python -m bot index --full`, then refit with `python -m bot calibrate --dataset FILE`.",
            name, recorded, embedder.name, wanted)


@dataclass(frozen=True, slots=True)
class _VersionFiles:
    """The data files of one version, as read from disk."""

    chunks: list[Chunk]
    vectors: np.ndarray
    labels: np.ndarray
    hnsw: hnswlib.Index
    bm25: BM25Index
    facts: FactsTable
    aliases: AliasTable


def _read_files(path: Path, name: str, params: dict[str, Any]) -> _VersionFiles:
    """Read the data files of version ``name`` at ``path``; IndexUnavailable when any of them is damaged."""
    try:
        chunks = [Chunk(**json.loads(line)) for line in (path / "chunks.jsonl").read_text("utf-8").splitlines() if line]
        vectors = np.load(path / "vectors.npy")
        labels = np.load(path / "labels.npy")
        dims = int(params["dims"])
        hnsw = hnswlib.Index(space="cosine", dim=dims)
        hnsw.load_index(str(path / "hnsw.bin"), max_elements=int(params["hnsw"]["max_elements"]))
        bm25 = BM25Index.load(path)
        facts = FactsTable.load(path / "facts.sqlite3")
        aliases = AliasTable.load(path / ALIASES_FILE)  # absent in versions built before aliases: empty
    except Exception as error:  # boundary: any damage to the files (json, numpy, hnswlib, sqlite3 and more,
        # each with its own errors) must never crash the process: the version is reported as corrupted
        raise IndexUnavailable(f"index version {name!r} is corrupted ({type(error).__name__}: {error}); {REBUILD_HINT}.") from None
    return _VersionFiles(chunks=chunks, vectors=vectors, labels=labels, hnsw=hnsw, bm25=bm25, facts=facts,
                         aliases=aliases)


def _version_info(name: str, params: dict[str, Any], files: _VersionFiles, embedder: Embedder) -> dict[str, object]:
    """``SearchIndex.info`` of a loaded version (``_fitted_config`` adds ``"fusion"`` when fitted constants apply)."""
    return {
        "version": name,
        "chunks": len(files.chunks),
        "documents": params["counts"]["documents"],
        "embedder": params["embedder"],
        # an index built before the field existed was fitted for its embedder (matched by name in _checked_params)
        "calibration_id": params.get("calibration_id") or calibration_of(embedder),
        "built_at": params["built_at"],
        "corpus_hash": params["corpus_hash"],
        "facts": params["counts"].get("facts", {}),
        "aliases": files.aliases.counts(),
    }


def _fitted_config(path: Path, config: RetrievalConfig, info: dict[str, object]) -> RetrievalConfig:
    """``config`` with the fusion constants fitted for this corpus (fusion.json at ``path``, also recorded as
    ``info["fusion"]``); ``config`` itself when there is no fit, or a bad one (logged: it must not take the index
    down)."""
    try:  # fusion constants fitted for this corpus override the configured defaults
        fitted = load_fusion(path)
        if fitted:
            config = apply_fusion(config, fitted)
            info["fusion"] = fitted
    except ValueError as error:  # a bad fit must not take the index down
        logger.warning("ignoring %s: %s", FUSION_FILE, error)
    return config


# --- sharing versions ------------------------------------------------------------------------------------------
def _warm_cache(embedder: Embedder, path: Path, name: str) -> None:
    """Give the passage cache the vectors of version ``name`` fetched to ``path`` (same embedder), so this host's
    next build embeds only what changed, not the whole site once more. Best effort: a failure only logs."""
    if not isinstance(embedder, CachedEmbedder):
        return
    try:
        params = json.loads((path / "params.json").read_text(encoding="utf-8"))
        if params.get("embedder") != embedder.name or params.get("dims") != embedder.dim:
            return
        chunks = [Chunk(**json.loads(line)) for line in (path / "chunks.jsonl").read_text("utf-8").splitlines()
                  if line]
        started = time.perf_counter()
        count = embedder.remember([passage_text(c) for c in chunks], np.load(path / "vectors.npy"))
        logger.info("passage cache: %d vectors of version %s in %.2f s", count, name,
                    time.perf_counter() - started)
    except Exception as error:  # boundary: best effort (any damage to the files, any cache error): a cold
        # cache only costs embeddings at the next build, so a failure only logs
        logger.warning("could not add the vectors of index version %s to the passage cache: %s", name, error)


class IndexManager:
    """Builds index versions under ``root`` and serves the current one, reloading when the pointer changes."""

    def __init__(
        self, root: Path, config: RetrievalConfig, embedder: Embedder, reranker: Reranker | None = None, *,
        store: VersionStore | None = None, keep_versions: int = 2,
    ) -> None:
        self.root = Path(root)
        self.store = store  # the shared version store of several hosts, or None (this disk only)
        self.keep_versions = max(1, int(keep_versions))
        self.config = config
        self.embedder = embedder
        self.reranker = reranker
        self._lock = threading.RLock()
        self._index: SearchIndex | None = None
        self._pointer_state: tuple[int, int] | None = None
        self._loaded_version: str | None = None
        self._loaded_fusion: int = 0  # mtime of the loaded version's fusion.json (0: none)

    # --- paths -------------------------------------------------------------------------------------------------
    @property
    def versions_dir(self) -> Path:
        return self.root / "versions"

    @property
    def pointer(self) -> Path:
        return self.root / "current"

    def current_version(self) -> str | None:
        try:
            name = self.pointer.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        return name or None

    # --- serving -----------------------------------------------------------------------------------------------
    def current(self) -> SearchIndex | None:
        """The live index (loaded on first use, reloaded after a new build), or None when none was built.

        Raises IndexUnavailable when the pointer names a partial, corrupted or incompatible version and no
        earlier version is loaded in this process (otherwise the earlier one keeps serving and an error is logged).
        """
        self.reload_if_changed()
        return self._index

    def reload_if_changed(self) -> bool:
        """Load the version the pointer names if it differs from the loaded one; True when a new one was loaded."""
        try:
            st = self.pointer.stat()
            state: tuple[int, int] | None = (st.st_mtime_ns, st.st_ino)
        except FileNotFoundError:
            state = None
        if state is not None and state == self._pointer_state and self._index is not None:
            return False
        with self._lock:
            name = self.current_version()
            if name is None:
                self._pointer_state = state
                return False
            if name == self._loaded_version and self._index is not None and self._fusion_stamp(name) == self._loaded_fusion:
                self._pointer_state = state
                return False
            try:
                index = self.load(name)
            except IndexUnavailable:
                if self._index is not None:
                    logger.error("index version %s is unusable; still serving %s", name, self._loaded_version)
                    self._pointer_state = state
                    return False
                raise
            self._index, self._loaded_version, self._pointer_state = index, name, state
            self._loaded_fusion = self._fusion_stamp(name)
            logger.info("loaded index version %s (%d chunks)", name, len(index))
            return True

    def load(self, name: str) -> SearchIndex:
        """Load one version directory; IndexUnavailable (with the rebuild command) if anything is wrong."""
        path = self.versions_dir / name
        params = _checked_params(path, name, self.embedder, self.config)
        files = _read_files(path, name, params)
        if not (len(files.chunks) == files.vectors.shape[0] == files.labels.shape[0] == files.bm25.n_docs
                == params["counts"]["chunks"]):
            raise IndexUnavailable(f"index version {name!r} is inconsistent (row counts differ); {REBUILD_HINT}.")
        info = _version_info(name, params, files, self.embedder)
        config = _fitted_config(path, self.config, info)
        return SearchIndex(
            chunks=files.chunks, vectors=files.vectors, hnsw=files.hnsw, labels=files.labels, bm25=files.bm25,
            facts=files.facts, embedder=self.embedder, config=config, info=info, reranker=self.reranker,
            aliases=files.aliases,
        )

    def _fusion_stamp(self, name: str) -> int:
        try:
            return (self.versions_dir / name / FUSION_FILE).stat().st_mtime_ns
        except OSError:
            return 0

    def save_fusion(self, fit: FusionFit | Mapping[str, Any]) -> Path:
        """Store fitted fusion constants (``retrieval.tuning``) with the current version and serve them: this
        process reloads at once, other processes at their next pointer check (the pointer is rewritten). With a
        shared store the fit makes a new version (the current one's files plus ``fusion.json``), published like a
        build, so every host serves it."""
        name = self.current_version()
        if name is None:
            raise IndexUnavailable(f"there is no index under {self.root} to calibrate yet; {REBUILD_HINT}.")
        if self.store is not None:
            path = self._fusion_version(name, fit)
            self.reload_if_changed()
            return path
        with self._lock:
            path = save_fusion(self.versions_dir / name, fit)
            self._switch(name)
        self.reload_if_changed()
        return path

    def _fusion_version(self, name: str, fit: FusionFit | Mapping[str, Any]) -> Path:
        """A copy of version ``name`` with ``fit`` in its fusion.json, under a new name: published, then current."""
        with open(self.root / ".build.lock", "a+") as lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            try:
                source = self.versions_dir / name
                new = version_name()
                tmp = self.versions_dir / f".tmp-{new}"
                tmp.mkdir(parents=True)
                try:
                    for item in source.iterdir():
                        if item.is_file() and item.name != FUSION_FILE:
                            shutil.copy2(item, tmp / item.name)
                    params = json.loads((tmp / "params.json").read_text(encoding="utf-8"))
                    params.update(version=new, previous=name)
                    (tmp / "params.json").write_text(json.dumps(params, indent=2, ensure_ascii=False),
                                                     encoding="utf-8")
                    save_fusion(tmp, fit)
                    final = self.versions_dir / new
                    os.replace(tmp, final)
                except BaseException:
                    shutil.rmtree(tmp, ignore_errors=True)
                    raise
                self._publish(new, final)
                self._switch(new)
                self._cleanup(keep={new, name})
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)
        logger.info("fusion constants saved as index version %s (from %s)", new, name)
        return final / FUSION_FILE

    # --- building ----------------------------------------------------------------------------------------------
    def build(self, chunks: Sequence[Chunk], documents: Sequence[Document], *, full: bool = False) -> BuildReport:
        """Build a new version from ``chunks`` and switch the pointer to it. Blocking: call from an executor."""
        started = time.perf_counter()
        self.versions_dir.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".build.lock", "a+") as lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            try:
                return self._build_locked(chunks, documents, full=full, started=started)
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)

    def _previous(self) -> tuple[str | None, dict[str, Any] | None]:
        name = self.current_version()
        if name is None:
            return None, None
        try:
            params = json.loads((self.versions_dir / name / "params.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return name, None
        return name, params

    def _build_locked(
        self, chunks: Sequence[Chunk], documents: Sequence[Document], *, full: bool, started: float
    ) -> BuildReport:
        """The build under the lock: ``VersionBuilder`` (``retrieval.index_build``) reads what the previous version
        offers, embeds and writes the new version; then it is published (with a shared store), becomes current,
        and old versions go."""
        unique = unique_chunks(chunks)
        builder = VersionBuilder(self.versions_dir, self.config, self.embedder)
        prev_name, prev_params = self._previous()
        previous = builder.previous(prev_name, prev_params, full=full)
        texts, hashes, added, removed = builder.changes(unique, previous.chunks)
        vectors, embedded = builder.embed(texts, full=previous.full)
        written = builder.write(unique, documents, texts, hashes, vectors, previous, started=started)
        if self.store is not None:
            self._publish(written.name, written.path)
        self._switch(written.name)
        self._cleanup(keep={written.name, prev_name})
        report = BuildReport(
            version=written.name, total=len(unique), added=added, removed=removed, embedded=embedded,
            documents=written.documents, duration_s=time.perf_counter() - started, full=previous.full,
            hnsw=written.hnsw, facts=written.facts, path=str(written.path),
        )
        logger.info("index build %s", json.dumps(report.as_json()))
        return report

    def _switch(self, name: str) -> None:
        tmp = self.root / f".current.{uuid.uuid4().hex[:8]}"
        tmp.write_text(name + "\n", encoding="utf-8")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, self.pointer)

    def _publish(self, name: str, path: Path) -> None:
        """Share a new version before switching to it: when that fails, the version is removed and the error
        raised (the build fails, every host keeps the old version). Pruning the store only logs its failure."""
        assert self.store is not None
        try:
            self.store.publish(name, path)
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)
            raise
        try:
            self.store.prune(self.keep_versions, protect=(name,))
        except Exception as error:  # boundary: the store's errors vary (StoreError, driver errors); the version is
            # published already, so a failed prune of old ones only logs, never fails the build
            logger.warning("pruning old index versions in the shared store failed: %s", error)

    def sync(self) -> str | None:
        """With a shared store: make the newest complete published version current here, fetching it (every
        checksum verified) when this host lacks it, and prune local versions beyond ``keep_versions``. Returns the
        version switched to (loaded already when it was fetched), or None when nothing changed (no store, already
        current, or a build or fetch runs in another process of this host). A fetched version's vectors then go
        into the passage cache. A store without any version is seeded with this host's current one (a
        deployment moving to several hosts). Blocking. Raises the store's errors (``StoreError``,
        ``IndexTransferError``); the version in use keeps serving then."""
        if self.store is None:
            return None
        latest = self.store.latest()
        current = self.current_version()
        if latest is not None and latest == current:
            return None
        self.versions_dir.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".build.lock", "a+") as lock_file:
            try:
                fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return None  # a build on this host switches the pointer itself; a fetch here is already running
            try:
                current = self.current_version()
                if latest is None:
                    if current and (self.versions_dir / current / "params.json").is_file():
                        if self.store.publish(current, self.versions_dir / current, only_if_empty=True) is not None:
                            logger.info("seeded the shared index store with version %s", current)
                    return None
                if latest == current:
                    return None
                fetched = not (self.versions_dir / latest).is_dir()
                if fetched:
                    started = time.perf_counter()
                    self.store.fetch(latest, self.versions_dir)
                    logger.info("fetched index version %s in %.2f s", latest, time.perf_counter() - started)
                self._switch(latest)
                self._cleanup(keep={latest, current})
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)
        if fetched:
            try:  # serve it first, then fill the passage cache (minutes for a big site, on a real embedder)
                self.reload_if_changed()
            except IndexUnavailable:
                pass  # reported by whoever asks for the index next; the cache is filled all the same
            _warm_cache(self.embedder, self.versions_dir / latest, latest)
        return latest

    def _cleanup(self, keep: set[str | None]) -> None:
        """Remove old versions (all but ``keep`` and the newest ``keep_versions``) and leftovers; under the lock."""
        def arrived(path: Path) -> tuple[int, str]:  # built or fetched here: newest first (a name has seconds only)
            try:
                return path.stat().st_mtime_ns, path.name
            except OSError:
                return 0, path.name

        newest = sorted((p for p in self.versions_dir.iterdir() if p.is_dir() and not p.name.startswith(".")),
                        key=arrived, reverse=True)
        keep = set(keep) | {p.name for p in newest[: self.keep_versions]}
        for path in self.versions_dir.iterdir():
            if path.name in keep:
                continue
            if path.is_dir():  # old versions, and partial builds left by a crash (we hold the build lock)
                shutil.rmtree(path, ignore_errors=True)
        for stray in self.root.glob(".current.*"):
            stray.unlink(missing_ok=True)

    def status(self) -> dict[str, object]:
        """``{"version", "chunks", "documents", "embedder", "built_at"}`` of the current index, or an error."""
        try:
            index = self.current()
        except IndexUnavailable as error:
            return {"version": self.current_version(), "error": str(error)}
        return dict(index.info) if index is not None else {"version": None, "chunks": 0}
