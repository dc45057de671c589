"""The inverted-index BM25 against the rank-bm25 oracle."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from retrieval.analyzer import Analyzer
from retrieval.bm25 import BM25Index

WORDS = st.sampled_from([f"w{i}" for i in range(25)])
CORPORA = st.lists(st.lists(WORDS, min_size=0, max_size=30), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(CORPORA, st.lists(WORDS, min_size=1, max_size=6))
def test_scores_match_rank_bm25(corpus, query):
    if not any(corpus):
        corpus = [*corpus, ["w0"]]
    ours = BM25Index.from_tokens(corpus).scores(query)
    oracle = BM25Okapi(corpus).get_scores(query)
    np.testing.assert_allclose(ours, oracle, rtol=1e-9, atol=1e-12)


def test_real_text_and_top_k(tmp_path):
    analyzer = Analyzer()
    docs = [
        "Mata kuliah Basis Data wajib di semester lima",
        "Pendaftaran mahasiswa baru dibuka bulan Juni",
        "Basis data terdistribusi adalah mata kuliah pilihan",
        "Jadwal ujian akhir semester",
        "Beasiswa prestasi untuk mahasiswa",
        "Laboratorium jaringan komputer buka sampai malam",
    ]
    corpus = [analyzer(d) for d in docs]
    index = BM25Index.from_tokens(corpus)
    query = analyzer("mata kuliah basis data")
    np.testing.assert_allclose(index.scores(query), BM25Okapi(corpus).get_scores(query))
    rows, scores = index.top(query, 2)
    assert rows.tolist() == [0, 2] or rows.tolist() == [2, 0]
    assert scores[0] >= scores[1] > 0
    index.save(tmp_path)
    again = BM25Index.load(tmp_path)
    np.testing.assert_array_equal(again.scores(query), index.scores(query))
    assert index.top(["tidakada"], 3)[0].size == 0
