"""The steps of a build (retrieval.index_build) on their own, with a small deterministic embedder."""

import hashlib
import json
from dataclasses import replace

import numpy as np
import pytest

from retrieval.config import RetrievalConfig
from retrieval.index_build import FORMAT_VERSION, VersionBuilder, chunk_json, unique_chunks
from tests.retrieval.conftest import corpus_chunks, corpus_documents


class _HashEmbedder:
    name = "toy-hash"
    dim = 8
    calibration_id = "toy-hash"

    def embed(self, texts, kind="passage"):
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:8], dtype=np.uint8).astype(np.float32) + 1
                for t in texts]
        return np.array(rows, dtype=np.float32).reshape(len(texts), self.dim)


def _write_previous(directory, chunks, labels):
    directory.mkdir(parents=True)
    (directory / "chunks.jsonl").write_text("".join(chunk_json(c) + "\n" for c in chunks), encoding="utf-8")
    np.save(directory / "labels.npy", np.asarray(labels, dtype=np.int64))


def test_unique_chunks_keep_the_first_of_each_id_in_order():
    chunks = corpus_chunks()
    twin = replace(chunks[0], text="another text")
    assert unique_chunks([chunks[1], chunks[0], twin, chunks[1]]) == [chunks[1], chunks[0]]


def test_a_compatible_previous_version_offers_its_labels_and_hashes(tmp_path):
    builder = VersionBuilder(tmp_path, RetrievalConfig(), _HashEmbedder())
    chunks = corpus_chunks()[:3]
    _write_previous(tmp_path / "v1", chunks, [5, 6, 7])
    params = {"format": FORMAT_VERSION, "embedder": "toy-hash", "dims": 8}
    previous = builder.previous("v1", params, full=False)
    assert previous.compatible and not previous.full and previous.directory == tmp_path / "v1"
    assert [label for label, _ in previous.chunks.values()] == [5, 6, 7]
    texts, hashes, added, removed = builder.changes(chunks[1:] + corpus_chunks()[3:4], previous.chunks)
    assert len(texts) == len(hashes) == 3 and (added, removed) == (1, 1)


def test_another_embedder_or_a_damaged_version_means_a_full_rebuild(tmp_path, caplog):
    builder = VersionBuilder(tmp_path, RetrievalConfig(), _HashEmbedder())
    _write_previous(tmp_path / "v1", corpus_chunks()[:3], [0, 1])  # one label short: unreadable
    params = {"format": FORMAT_VERSION, "embedder": "toy-hash", "dims": 8}
    previous = builder.previous("v1", params, full=False)
    assert previous.compatible and previous.full and previous.chunks == {}
    assert "previous index v1 unreadable" in caplog.text
    other = builder.previous("v1", {**params, "embedder": "other"}, full=False)
    assert not other.compatible and other.full and other.chunks == {}
    assert builder.previous(None, None, full=False).full is False  # a first build is not "full"


def test_a_failed_write_leaves_no_temporary_directory(tmp_path, monkeypatch):
    import retrieval.index_build

    def broken(documents, path):
        raise RuntimeError("disk full")

    monkeypatch.setattr(retrieval.index_build, "build_facts", broken)
    builder = VersionBuilder(tmp_path, RetrievalConfig(), _HashEmbedder())
    previous = builder.previous(None, None, full=False)
    chunks = corpus_chunks()[:2]
    texts, hashes, _, _ = builder.changes(chunks, previous.chunks)
    vectors, embedded = builder.embed(texts, full=False)
    assert embedded == 2 and vectors.dtype == np.float32
    with pytest.raises(RuntimeError, match="disk full"):
        builder.write(chunks, [], texts, hashes, vectors, previous, started=0.0)
    assert list(tmp_path.iterdir()) == []


def test_a_written_version_is_complete(tmp_path):
    builder = VersionBuilder(tmp_path, RetrievalConfig(), _HashEmbedder())
    previous = builder.previous(None, None, full=False)
    chunks = corpus_chunks()
    texts, hashes, _, _ = builder.changes(chunks, previous.chunks)
    vectors, _ = builder.embed(texts, full=False)
    written = builder.write(chunks, corpus_documents(), texts, hashes, vectors, previous, started=0.0)
    assert written.path == tmp_path / written.name and written.hnsw == "rebuilt"
    assert [p.name for p in tmp_path.iterdir()] == [written.name]
    params = json.loads((written.path / "params.json").read_text(encoding="utf-8"))
    assert params["counts"]["chunks"] == len(chunks) and params["previous"] is None
    assert params["hnsw"]["build"] == "rebuilt" and params["hnsw"]["elements"] == len(chunks)
