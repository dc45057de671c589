"""Small files every replica keeps a copy of, in PostgreSQL: the site's calibration that ``python -m bot calibrate``
writes to ``DATA_DIR/calibration/`` (the abstention model, the reader gate's threshold).

One row per file (migration 8)::

    shared_files (name text primary key, sha256 text, data bytea, updated_at timestamptz)

``publish`` replaces the row (the last publisher wins, as the last ``calibrate`` run does on one host). ``sync``
compares each file here with the row's sha256 and fetches only those that differ; a fetched file is checked against
its sha256, written beside the target and renamed over it, so a reader never sees half a file and a row whose bytes
do not match is refused (``SharedFileError``) with the file here left as it was. A file with no row is left alone.

Index versions, which are large and many, travel through ``storage.pg_index`` instead.
"""

from __future__ import annotations

import hashlib
import logging
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from storage.errors import StoreError
from storage.pg import PgDatabase

__all__ = ["PgFileStore", "SharedFileError", "SyncResult"]

logger = logging.getLogger(__name__)


class SharedFileError(StoreError):
    """A shared file could not be fetched as published (its bytes do not match its sha256) or has an unsafe name;
    the copy here was kept."""


@dataclass(slots=True)
class SyncResult:
    changed: list[str] = field(default_factory=list)  # names fetched (the file here is the published one now)
    errors: list[str] = field(default_factory=list)  # one line per file refused; its copy here was kept


def _check_name(name: str) -> str:
    rel = PurePosixPath(name)
    if not name or rel.is_absolute() or any(part in ("", ".", "..") for part in rel.parts):
        raise SharedFileError(f"{name!r} is not a safe shared file name (a relative path without '..')")
    return name


def _sha256_of(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


class PgFileStore:
    """Publishes and fetches small files through the PostgreSQL of ``db`` (the ``shared_files`` table)."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    def publish(self, name: str, path: Path) -> str:
        """Store the bytes of ``path`` as ``name`` (replacing what was there). Returns their sha256."""
        _check_name(name)
        data = Path(path).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        self.db.write(f"publishing {name}", lambda conn: conn.execute(
            "INSERT INTO shared_files (name, sha256, data, updated_at) VALUES (%s, %s, %s, clock_timestamp()) "
            "ON CONFLICT (name) DO UPDATE SET sha256 = EXCLUDED.sha256, data = EXCLUDED.data, "
            "updated_at = EXCLUDED.updated_at", (name, digest, data)), repeatable=True)
        logger.info("published %s to PostgreSQL (%d bytes, sha256 %s…)", name, len(data), digest[:12])
        return digest

    def digests(self, names: list[str]) -> dict[str, str]:
        """``{name: sha256}`` of the published ones among ``names``."""
        rows = self.db.read("reading shared file checksums", lambda conn: conn.execute(
            "SELECT name, sha256 FROM shared_files WHERE name = ANY(%s)", (list(names),)).fetchall())
        return {name: digest for name, digest in rows}

    def fetch(self, name: str, target: Path) -> bool:
        """Write the published ``name`` to ``target`` when it differs from the file there (checked, then renamed
        into place). False when nothing was published under ``name`` or the file here is already it.
        ``SharedFileError`` when the row's bytes do not match its sha256 (``target`` untouched)."""
        _check_name(name)
        target = Path(target)
        row = self.db.read(f"fetching {name}", lambda conn: conn.execute(
            "SELECT sha256, data FROM shared_files WHERE name = %s", (name,)).fetchone())
        if row is None:
            return False
        expected, data = row[0], bytes(row[1])
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected:
            raise SharedFileError(f"{name} in PostgreSQL has sha256 {actual[:12]}… ({len(data)} bytes) but its row "
                                  f"says {expected[:12]}…; refused, the copy here ({target}) is kept")
        if _sha256_of(target) == expected:
            return False
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.fetch-{uuid.uuid4().hex[:8]}")
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        logger.debug("fetched %s from PostgreSQL into %s", name, target)
        return True

    def sync(self, files: dict[str, Path]) -> SyncResult:
        """Bring each ``{name: target}`` here whose published sha256 differs from the file's (one query when none
        does). A refused file is an error line and the others still come; PostgreSQL away raises ``StoreError``."""
        result = SyncResult()
        published = self.digests(list(files))
        for name, target in files.items():
            digest = published.get(name)
            if digest is None or digest == _sha256_of(Path(target)):
                continue
            try:
                if self.fetch(name, target):
                    result.changed.append(name)
            except SharedFileError as error:
                result.errors.append(str(error))
        return result
