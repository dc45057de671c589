"""retrieval.tuning: per-index fusion constants fitted on labelled questions, stored as fusion.json and served."""

from __future__ import annotations

import json
import logging
from dataclasses import replace

import pytest

from retrieval.config import RetrievalConfig
from retrieval.evaluation import evaluate, load_dataset
from retrieval.index import IndexManager
from retrieval.tuning import (
    CANDIDATES,
    FUSION_FILE,
    FusionFit,
    apply_fusion,
    fit_fusion,
    fit_fusion_report,
    load_fusion,
    save_fusion,
)
from tests.retrieval.conftest import corpus_chunks, corpus_documents

pytestmark = pytest.mark.slow  # builds indexes and fits over them

QUESTIONS = [
    ("kapan pendaftaran jalur mandiri dibuka", "pendaftaran"),
    ("berapa SKS minimal sebelum mengajukan proposal skripsi", "skripsi"),
    ("email Prof. Suhartono", "dosen-suhartono"),
    ("dosen yang ahli keamanan siber", "dosen-fitri"),
    ("di mana sekretariat program studi", "kontak"),
    ("visi program studi tahun 2035", "visi"),
    ("PKL dilaksanakan semester berapa", "pkl"),
    ("beasiswa KIP Kuliah", "beasiswa"),
    ("laboratorium buka sampai jam berapa", "lab"),
    ("mata kuliah IF-302", "kurikulum"),
]


@pytest.fixture
def manager(tmp_path, embedder):
    manager = IndexManager(tmp_path / "index", RetrievalConfig(), embedder)
    manager.build(corpus_chunks(), corpus_documents())
    return manager


def _rows(questions=QUESTIONS):
    return [{"id": f"q{i}", "query": q, "relevant_doc_ids": [doc]} for i, (q, doc) in enumerate(questions)]


def test_fit_scores_every_candidate_and_agrees_with_eval_retrieval(manager, tmp_path):
    index = manager.current()
    fit = fit_fusion_report(index, _rows(), min_items=1, min_gain=0.0)
    assert fit.n == len(QUESTIONS) and len(fit.candidates) == len(CANDIDATES)
    best = max(row["mrr@10"] for row in fit.candidates)
    assert fit.after["mrr@10"] == best >= fit.before["mrr@10"]
    assert fit.changed and fit.values in [row["values"] for row in fit.candidates if row["mrr@10"] == best]
    # the current configuration's score is what `eval retrieval` reports for the same questions
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    assert fit.before["mrr@10"] == pytest.approx(evaluate(index, load_dataset(path))["global"]["mrr@10"], abs=1e-4)
    assert fit.before["recall@1"] == pytest.approx(evaluate(index, load_dataset(path))["global"]["recall@1"], abs=1e-4)


def test_fit_keeps_the_current_constants_without_enough_evidence(manager):
    index = manager.current()
    few = fit_fusion_report(index, _rows()[:3])  # fewer than MIN_ITEMS questions
    assert not few.changed and few.values == {"fusion": "weighted", "fusion_norm": index.config.fusion_norm,
                                             "dense_weight": index.config.dense_weight}
    assert few.after == few.before
    # unlabelled rows (an unanswerable question has no relevant page) are skipped, not counted
    assert fit_fusion_report(index, [{"query": "siapa rektor", "answerable": False}], min_items=1).n == 0


def test_fit_moves_off_a_bad_setting(manager):
    index = manager.current().with_config(replace(RetrievalConfig(), fusion="rrf", rrf_k=60, mmr_lambda=0.0))
    candidates = [{"fusion": "weighted", "fusion_norm": "zscore", "dense_weight": w} for w in (0.5, 0.65)]
    fit = fit_fusion_report(index, _rows(), candidates=candidates, min_items=1, min_gain=-1.0)
    assert fit.changed and fit.values in candidates
    assert fit_fusion(index, _rows(), candidates=candidates, min_items=1, min_gain=-1.0) == fit.values


def test_save_serves_and_carries_the_fit(manager, caplog):
    other = IndexManager(manager.root, manager.config, manager.embedder)  # e.g. the serving process
    assert other.current().config.dense_weight == RetrievalConfig().dense_weight
    values = {"fusion": "weighted", "fusion_norm": "minmax", "dense_weight": 0.9}
    fit = FusionFit(values=values, n=30, before={"mrr@10": 0.5}, after={"mrr@10": 0.6}, changed=True)
    path = manager.save_fusion(fit)
    assert path.name == FUSION_FILE and path.parent.name == manager.current_version()
    assert json.loads(path.read_text())["n"] == 30
    index = manager.current()
    assert (index.config.fusion_norm, index.config.dense_weight) == ("minmax", 0.9)
    assert index.info["fusion"] == values and index.config.mmr_lambda == manager.config.mmr_lambda
    assert other.current().config.dense_weight == 0.9  # the other process reloads on the rewritten pointer
    # a rebuild keeps the site's fitted constants
    manager.build(corpus_chunks()[:-1], corpus_documents()[:-1])
    assert load_fusion(manager.versions_dir / manager.current_version()) == values
    assert manager.current().config.dense_weight == 0.9
    # a damaged fusion.json is ignored with a warning: the index still serves, with the configured constants
    (manager.versions_dir / manager.current_version() / FUSION_FILE).write_text("{not json", encoding="utf-8")
    fresh = IndexManager(manager.root, manager.config, manager.embedder)
    with caplog.at_level(logging.WARNING, logger="retrieval.index"):
        assert fresh.current().config.dense_weight == RetrievalConfig().dense_weight
    assert FUSION_FILE in caplog.text


def test_only_fusion_constants_can_be_fitted(tmp_path):
    with pytest.raises(ValueError, match="mmr_lambda"):
        apply_fusion(RetrievalConfig(), {"mmr_lambda": 0.0})
    with pytest.raises(ValueError, match="FUSION_NORM"):
        save_fusion(tmp_path, {"fusion_norm": "softmax"})
    assert not (tmp_path / FUSION_FILE).exists()
    assert load_fusion(tmp_path) is None
    save_fusion(tmp_path, {"dense_weight": 0.8})
    assert apply_fusion(RetrievalConfig(), load_fusion(tmp_path)).dense_weight == 0.8


def test_with_config_shares_the_index(manager):
    index = manager.current()
    twin = index.with_config(replace(index.config, dense_weight=1.0))
    assert twin.vectors is index.vectors and twin.bm25 is index.bm25 and twin.config.dense_weight == 1.0
    assert twin.search("email Prof. Suhartono", k=1).hits[0].doc_id == "dosen-suhartono"
    with pytest.raises(ValueError, match="BM25_STEMMING"):
        index.with_config(replace(index.config, bm25_stemming=True))
