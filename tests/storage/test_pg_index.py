"""storage.pg_index against the real PostgreSQL (a schema per test): a version's files travel as bytea chunks with
a sha256 each, a corrupted chunk is refused, a half-published version is never seen, pruning keeps the newest N."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from storage.pg import PgDatabase
from storage.pg_index import CHUNK_BYTES, IndexTransferError, PgIndexStore, manifest_of

pytestmark = pytest.mark.postgres
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db(pg_url):
    database = PgDatabase(pg_url, statement_timeout_seconds=10, connect_timeout_seconds=5)
    yield database
    database.close()


def _version(root: Path, name: str, seed: int = 0) -> Path:
    """A version directory with the shapes that matter: empty, exactly one chunk, several chunks, a sub-directory."""
    path = root / name
    (path / "sub").mkdir(parents=True)
    (path / "params.json").write_text(json.dumps({"version": name, "seed": seed}), encoding="utf-8")
    (path / "empty.bin").write_bytes(b"")
    (path / "exact.bin").write_bytes(bytes([seed % 256]) * CHUNK_BYTES)
    (path / "hnsw.bin").write_bytes(os.urandom(2 * CHUNK_BYTES + 12345))
    (path / "sub" / "facts.sqlite3").write_bytes(b"facts %d" % seed)
    return path


def _same_tree(a: Path, b: Path) -> bool:
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    return files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()) and all(
        (a / f).read_bytes() == (b / f).read_bytes() for f in files)


def test_publish_then_fetch_gives_the_same_files(db, tmp_path):
    store = PgIndexStore(db)
    source = _version(tmp_path / "a", "v20260101-000000-aaaaaa")
    manifest = store.publish(source.name, source)
    assert set(manifest["files"]) == {"params.json", "empty.bin", "exact.bin", "hnsw.bin", "sub/facts.sqlite3"}
    assert manifest["files"]["hnsw.bin"]["chunks"] == 3 and manifest["files"]["exact.bin"]["chunks"] == 1
    assert store.latest() == source.name
    fetched = store.fetch(source.name, tmp_path / "b" / "versions")
    assert fetched == tmp_path / "b" / "versions" / source.name and _same_tree(source, fetched)
    assert manifest_of(fetched) == manifest
    assert [p.name for p in (tmp_path / "b" / "versions").iterdir()] == [source.name]  # no temp dir left
    [listed] = store.versions()
    assert listed.complete and listed.files == 5 and listed.size_bytes == sum(
        f["size"] for f in manifest["files"].values())


def test_a_corrupted_chunk_is_refused_and_nothing_is_left(db, tmp_path):
    store = PgIndexStore(db)
    source = _version(tmp_path / "a", "v20260101-000000-aaaaaa")
    store.publish(source.name, source)
    with db.connection() as conn:
        conn.execute("UPDATE index_artifacts SET data = overlay(data placing '\\x00ff'::bytea from 100) "
                     "WHERE path = 'hnsw.bin' AND chunk_no = 1")
    target = tmp_path / "b" / "versions"
    with pytest.raises(IndexTransferError) as raised:
        store.fetch(source.name, target)
    message = str(raised.value)
    assert "hnsw.bin" in message and "sha256" in message and "keeps serving" in message
    assert list(target.iterdir()) == []


def test_a_missing_chunk_is_refused(db, tmp_path):
    store = PgIndexStore(db)
    source = _version(tmp_path / "a", "v20260101-000000-aaaaaa")
    store.publish(source.name, source)
    with db.connection() as conn:
        conn.execute("DELETE FROM index_artifacts WHERE path = 'hnsw.bin' AND chunk_no = 1")
    with pytest.raises(IndexTransferError, match="hnsw.bin misses chunk 1"):
        store.fetch(source.name, tmp_path / "b")
    assert list((tmp_path / "b").iterdir()) == []


def test_an_unsafe_path_in_a_manifest_is_refused(db, tmp_path):
    store = PgIndexStore(db)
    source = _version(tmp_path / "a", "v1")
    store.publish("v1", source)
    with db.connection() as conn:
        conn.execute("UPDATE index_versions SET manifest = jsonb_set(manifest, '{files,../evil}', "
                     "'{\"size\": 1, \"sha256\": \"x\", \"chunks\": 1}')")
    with pytest.raises(IndexTransferError, match="unsafe path"):
        store.fetch("v1", tmp_path / "b")
    assert not (tmp_path / "evil").exists()


def test_an_incomplete_version_is_invisible_and_pruned_when_stale(db, tmp_path):
    store = PgIndexStore(db)
    store.publish("v1", _version(tmp_path, "v1"))
    with db.connection() as conn:  # what a publisher that died between transactions would leave
        conn.execute("INSERT INTO index_versions (name, manifest, complete) VALUES ('v2', '{\"files\": {}}', FALSE)")
    assert store.latest() == "v1"
    with pytest.raises(IndexTransferError, match="not .*published complete"):
        store.fetch("v2", tmp_path / "b")
    assert store.prune(5) == []  # a fresh incomplete row may still be in writing
    with db.connection() as conn:
        conn.execute("UPDATE index_versions SET created_at = now() - interval '2 hours' WHERE name = 'v2'")
    assert store.prune(5) == ["v2"] and [v.name for v in store.versions()] == ["v1"]


def test_a_publish_that_fails_half_way_leaves_nothing(db, tmp_path, monkeypatch):
    store = PgIndexStore(db)
    store.publish("v1", _version(tmp_path, "v1"))
    source = _version(tmp_path, "v2", seed=2)
    real_open, opened = open, []

    def failing_open(path, mode="r", *args, **kwargs):
        if "b" in mode and str(path).startswith(str(source)):
            opened.append(path)
            if len(opened) == 3:
                raise OSError("disk went away")
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", failing_open)
    with pytest.raises(OSError, match="disk went away"):
        store.publish("v2", source)
    monkeypatch.undo()
    assert store.latest() == "v1" and [v.name for v in store.versions()] == ["v1"]
    with db.connection() as conn:
        assert conn.execute("SELECT count(*) FROM index_artifacts WHERE version = 'v2'").fetchone()[0] == 0


def test_a_publisher_killed_mid_copy_leaves_no_version(pg_url, db, tmp_path):
    """A real SIGKILL of a publishing process while its COPY runs: PostgreSQL rolls the transaction back."""
    store = PgIndexStore(db)
    store.publish("v1", _version(tmp_path, "v1"))
    source = _version(tmp_path, "v2", seed=2)
    script = textwrap.dedent(f"""
        import sys, time
        import psycopg
        from storage.pg import PgDatabase
        from storage.pg_index import PgIndexStore
        real = psycopg.Copy.write_row
        def slow(self, row):
            real(self, row)
            print("row", flush=True)
            time.sleep(0.5)
        psycopg.Copy.write_row = slow
        PgIndexStore(PgDatabase({pg_url!r})).publish("v2", {str(source)!r})
        print("done", flush=True)
    """)
    with subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}) as proc:
        try:
            assert proc.stdout.readline().strip() == "row"  # the version row and a chunk written, not committed
            proc.send_signal(signal.SIGKILL)
            assert proc.wait(timeout=30) == -signal.SIGKILL
        finally:
            if proc.poll() is None:
                proc.kill()
    assert store.latest() == "v1" and [v.name for v in store.versions()] == ["v1"]


def test_publish_replaces_a_version_of_the_same_name_and_seeding_only_fills_an_empty_store(db, tmp_path):
    store = PgIndexStore(db)
    assert store.publish("v1", _version(tmp_path / "x", "v1"), only_if_empty=True) is not None
    assert store.publish("v9", _version(tmp_path / "y", "v9"), only_if_empty=True) is None
    assert store.latest() == "v1"
    again = _version(tmp_path / "z", "v1", seed=7)
    store.publish("v1", again)  # a retry after a lost acknowledgement
    assert _same_tree(again, store.fetch("v1", tmp_path / "fetched"))


def test_prune_keeps_the_newest_n_and_protected_ones(db, tmp_path):
    store = PgIndexStore(db)
    for i in range(5):
        store.publish(f"v{i}", _version(tmp_path, f"v{i}", seed=i))
    assert store.latest() == "v4"
    assert sorted(store.prune(2, protect=("v0",))) == ["v1", "v2"]
    assert [v.name for v in store.versions()] == ["v4", "v3", "v0"]
    with db.connection() as conn:
        assert {r[0] for r in conn.execute("SELECT DISTINCT version FROM index_artifacts")} == {"v0", "v3", "v4"}

