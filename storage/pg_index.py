"""Index versions in PostgreSQL: how a version built on one host reaches replicas that share no disk.

The replica that builds a version publishes every file of its directory (``DATA_DIR/index/versions/<name>``: HNSW,
BM25, facts, aliases, fusion constants, ``params.json``, whatever it holds) as ``bytea`` chunks::

    index_versions  (name, created_at, completed_at, manifest jsonb, complete)
    index_artifacts (version, path, chunk_no, data bytea)

The manifest lists each file with its size, chunk count and sha256. A version is written in one transaction and
marked ``complete`` at its end: a publisher killed half-way leaves nothing that a reader can see (and a row left
incomplete by anything else is never fetched, and is pruned after ``STALE_INCOMPLETE``).

A replica fetches a version into a temporary directory beside its versions (``.fetch-<name>-<random>``), checks
every file's size and sha256 against the manifest, and only then renames the directory to ``<name>``; a mismatch
raises ``IndexTransferError`` naming the file and leaves nothing behind, so the version it serves keeps serving.

``retrieval.index.IndexManager`` calls ``publish``/``latest``/``fetch``/``prune`` (its ``store``); ``bot.wiring``
connects the two when DATABASE_URL is PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from storage.errors import StoreError
from storage.pg import PgDatabase

__all__ = ["CHUNK_BYTES", "IndexTransferError", "PgIndexStore", "PublishedVersion", "manifest_of"]

logger = logging.getLogger(__name__)

CHUNK_BYTES = 1 << 20  # one bytea row per MiB of a file
STALE_INCOMPLETE = "1 hour"  # an incomplete row older than this has no live publisher (one transaction each)
MANIFEST_FORMAT = 1
_PUBLISH_LOCK_CLASS = 0x70726F65  # the first key of the advisory lock publishers take turns on (per schema)


class IndexTransferError(StoreError):
    """A version could not be fetched as published (a checksum or size differs, a file is missing or the path is
    unsafe); nothing was switched, and the version in use keeps serving."""


@dataclass(frozen=True, slots=True)
class PublishedVersion:
    name: str
    complete: bool
    created_at: str
    completed_at: str | None
    files: int
    size_bytes: int


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK_BYTES), b""):
            digest.update(block)
    return digest.hexdigest()


def manifest_of(directory: Path) -> dict[str, Any]:
    """``{"format", "files": {relative posix path: {"size", "sha256", "chunks"}}}`` of every file under
    ``directory`` (sub-directories included, sorted)."""
    directory = Path(directory)
    files: dict[str, dict[str, Any]] = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        size = path.stat().st_size
        files[path.relative_to(directory).as_posix()] = {
            "size": size, "sha256": _sha256(path), "chunks": max(1, -(-size // CHUNK_BYTES)),
        }
    return {"format": MANIFEST_FORMAT, "files": files}


def _safe_relative(path: str) -> PurePosixPath:
    rel = PurePosixPath(path)
    if rel.is_absolute() or not rel.parts or any(part in ("", ".", "..") for part in rel.parts):
        raise IndexTransferError(f"the manifest names an unsafe path {path!r}; refusing to write it")
    return rel


class PgIndexStore:
    """Publishes and fetches index versions through the PostgreSQL of ``db`` (tables of migration 4).

    Large transfers run with their own statement timeout (``transfer_timeout_seconds``) instead of the stores'
    short one: copying a few hundred MB is one statement.
    """

    def __init__(self, db: PgDatabase, *, transfer_timeout_seconds: float = 900.0) -> None:
        self.db = db
        self.transfer_timeout_ms = max(1000, int(transfer_timeout_seconds * 1000))

    def _long(self, conn: Any) -> None:
        conn.execute(f"SET LOCAL statement_timeout = {self.transfer_timeout_ms}")

    # --- publishing --------------------------------------------------------------------------------------------
    def publish(self, name: str, directory: Path, *, only_if_empty: bool = False) -> dict[str, Any] | None:
        """Publish the files of ``directory`` as version ``name`` in one transaction, complete at its end; a
        version of that name published before is replaced (so a retry after a lost acknowledgement is safe).
        Publishers take turns (a transaction-level advisory lock), so the newest completed is the last published.
        ``only_if_empty``: publish only when no complete version exists yet (a replica seeding the store with the
        index it already has); None when skipped. Returns the manifest."""
        directory = Path(directory)
        if not directory.is_dir():
            raise FileNotFoundError(f"index version directory {directory} does not exist")
        manifest = manifest_of(directory)

        def write(conn: Any) -> bool:
            self._long(conn)
            conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(current_schema()))", (_PUBLISH_LOCK_CLASS,))
            if only_if_empty and conn.execute("SELECT 1 FROM index_versions WHERE complete LIMIT 1").fetchone():
                return False
            conn.execute("DELETE FROM index_versions WHERE name = %s", (name,))
            conn.execute("INSERT INTO index_versions (name, manifest, complete) VALUES (%s, %s::jsonb, FALSE)",
                         (name, json.dumps(manifest)))
            with conn.cursor() as cur, cur.copy(
                    "COPY index_artifacts (version, path, chunk_no, data) FROM STDIN") as copy:
                for rel in manifest["files"]:
                    with open(directory / rel, "rb") as fh:
                        number = 0
                        while True:
                            block = fh.read(CHUNK_BYTES)
                            if not block and number:
                                break
                            copy.write_row((name, rel, number, block))
                            number += 1
                            if len(block) < CHUNK_BYTES:
                                break
            conn.execute("UPDATE index_versions SET complete = TRUE, completed_at = clock_timestamp() "
                         "WHERE name = %s", (name,))
            return True

        if not self.db.write(f"publishing index version {name}", write, repeatable=True):
            return None
        total = sum(f["size"] for f in manifest["files"].values())
        logger.info("published index version %s to PostgreSQL (%d files, %d bytes)", name, len(manifest["files"]),
                    total)
        return manifest

    # --- reading -------------------------------------------------------------------------------------------------
    def latest(self) -> str | None:
        """The newest complete version (by completion time), or None when none was published."""
        row = self.db.read("reading the newest index version", lambda conn: conn.execute(
            "SELECT name FROM index_versions WHERE complete ORDER BY completed_at DESC, name DESC LIMIT 1").fetchone())
        return row[0] if row else None

    def versions(self) -> list[PublishedVersion]:
        """Every version row, newest first (incomplete ones included: for operators and tests)."""
        rows = self.db.read("listing index versions", lambda conn: conn.execute(
            "SELECT name, complete, created_at, completed_at, manifest FROM index_versions "
            "ORDER BY COALESCE(completed_at, created_at) DESC, name DESC").fetchall())
        out = []
        for name, complete, created, completed, manifest in rows:
            files = (manifest or {}).get("files", {})
            out.append(PublishedVersion(name, bool(complete), created.isoformat(),
                                        completed.isoformat() if completed else None, len(files),
                                        sum(int(f.get("size", 0)) for f in files.values())))
        return out

    def fetch(self, name: str, versions_dir: Path) -> Path:
        """Download complete version ``name`` into ``versions_dir/<name>``: written into a temporary directory
        beside it, every file's size and sha256 checked against the manifest, then renamed. Returns the path.
        ``IndexTransferError`` when the version is not complete, or a file does not match (nothing is left)."""
        versions_dir = Path(versions_dir)
        versions_dir.mkdir(parents=True, exist_ok=True)
        final = versions_dir / name
        _safe_relative(name)

        def read(conn: Any) -> Path:
            self._long(conn)
            row = conn.execute("SELECT manifest FROM index_versions WHERE name = %s AND complete",
                               (name,)).fetchone()
            if row is None:
                raise IndexTransferError(f"index version {name} is not (or no longer) published complete in "
                                         "PostgreSQL")
            manifest = row[0]
            files: dict[str, dict[str, Any]] = manifest.get("files", {})
            for rel in files:
                _safe_relative(rel)
            tmp = versions_dir / f".fetch-{name}-{uuid.uuid4().hex[:8]}"
            tmp.mkdir()
            try:
                self._download(conn, name, files, tmp)
                for rel, meta in files.items():
                    path = tmp / rel
                    if not path.is_file():
                        raise IndexTransferError(f"index version {name}: {rel} has no data in PostgreSQL; not "
                                                 "switching to it")
                    size, digest = path.stat().st_size, _sha256(path)
                    if size != int(meta["size"]) or digest != meta["sha256"]:
                        raise IndexTransferError(
                            f"index version {name}: {rel} arrived with sha256 {digest[:12]}… ({size} bytes) but "
                            f"the manifest says {str(meta['sha256'])[:12]}… ({meta['size']} bytes); the download "
                            "is refused and the version in use keeps serving")
                if final.exists():  # fetched meanwhile by another process of this host: keep theirs
                    shutil.rmtree(tmp, ignore_errors=True)
                else:
                    os.replace(tmp, final)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            return final

        path = self.db.read(f"fetching index version {name}", read)
        logger.debug("fetched index version %s from PostgreSQL into %s", name, path)
        return path

    def _download(self, conn: Any, name: str, files: dict[str, dict[str, Any]], tmp: Path) -> None:
        handle = None
        current = None
        try:
            with conn.cursor(name=f"fetch_{uuid.uuid4().hex[:8]}") as cur:
                cur.itersize = 16
                cur.execute("SELECT path, chunk_no, data FROM index_artifacts WHERE version = %s "
                            "ORDER BY path, chunk_no", (name,))
                expected = 0
                for path, number, data in cur:
                    if path not in files:
                        raise IndexTransferError(f"index version {name}: {path} is not in its manifest")
                    if path != current:
                        if handle is not None:
                            handle.close()
                        target = tmp / _safe_relative(path)
                        target.parent.mkdir(parents=True, exist_ok=True)
                        handle, current, expected = open(target, "wb"), path, 0
                    if number != expected:
                        raise IndexTransferError(f"index version {name}: {path} misses chunk {expected}")
                    handle.write(data)
                    expected += 1
        finally:
            if handle is not None:
                handle.close()

    # --- pruning -------------------------------------------------------------------------------------------------
    def prune(self, keep: int, *, protect: tuple[str, ...] = ()) -> list[str]:
        """Delete all but the ``keep`` newest complete versions (never one named in ``protect``), and incomplete
        rows older than an hour. Returns the names deleted."""
        keep = max(1, int(keep))

        def write(conn: Any) -> list[str]:
            rows = conn.execute(
                "SELECT name FROM index_versions WHERE complete ORDER BY completed_at DESC, name DESC").fetchall()
            old = [r[0] for r in rows[keep:] if r[0] not in protect]
            stale = [r[0] for r in conn.execute(
                f"SELECT name FROM index_versions WHERE NOT complete AND created_at < now() - interval "
                f"'{STALE_INCOMPLETE}'").fetchall() if r[0] not in protect]
            gone = old + stale
            if gone:
                conn.execute("DELETE FROM index_versions WHERE name = ANY(%s)", (gone,))
            return gone

        gone = self.db.write("pruning index versions", write, repeatable=True)
        if gone:
            logger.info("pruned index versions from PostgreSQL: %s", ", ".join(gone))
        return gone
