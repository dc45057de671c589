"""bench.evaluation's report: rendered from a small hand-made raw dict, every sentence agrees with the numbers.

No model, no crawl: the raw measurements are written by hand and rendered with a stand-in embedder; the plots go to
tmp_path.
"""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

from bench import evaluation as ev
from generation.evaluation import ItemResult
from retrieval.evaluation import metrics_for

ABSTAIN = "Maaf, saya tidak menemukan jawabannya di situs program studi."


class _BagOfWords:
    dim = 32

    def embed(self, texts, kind="passage"):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, sum(map(ord, w)) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def _r(id_, *, answerable=True, answer="", abstained=False, golds=(), category="fakta", turns=1, latency=800.0,
       context=()) -> dict:
    return dataclasses.asdict(ItemResult(
        id=id_, query=f"pertanyaan nomor {id_} tentang prodi?", answerable=answerable, answer=answer or ABSTAIN,
        abstained=abstained, sources=[] if abstained else [{"url": "http://127.0.0.1:9/curriculum/", "title": "K"}],
        stop_reason="ABSTAIN_LOW_RETRIEVAL" if abstained else "FALLBACK_EXTRACTIVE", latency_ms=latency,
        golds=list(golds), category=category, turns=turns, context=list(context), relevant=["/curriculum"],
        previous=["jawaban sebelumnya"] * (turns - 1)))


def _retrieval(r1_ranked: list[str], norm_ranked: list[str] | None) -> dict:
    def block(ranked):
        m = metrics_for(ranked, {"a"})
        return {"mode": "hybrid", "n": 1, "global": m, "per_category": {"1_kata": {"n": 1, **m}}, "seconds": 0.1}

    modes = {"hybrid": {**block(r1_ranked), "ranked": {"Q1": r1_ranked}}, "dense": block(["b", "a"]), "bm25": block(["a"])}
    if norm_ranked is not None:
        modes[ev.NORM_OFF_ROW] = block(norm_ranked)
    return {"n": 1, "modes": modes, "items": [{"id": "Q1", "category": "1_kata", "relevant": ["a"]}]}


def _answers(results: list[dict]) -> dict:
    return {"results": results, "seconds": 12.0, "questions": len(results)}


def _raw() -> dict:
    faithful = "Total SKS adalah 144 SKS."
    dev_results = [
        _r("A1", answer=f"{faithful} [1]", golds=["144 SKS"], context=[faithful]),  # correct
        _r("A2", answer="Gedung Sains. [1]", golds=["Laboratorium Jaringan"], category="daftar"),  # wrong
        _r("A3", answer="Ada yang lain: ETH0. [1]", golds=["ETH0"], category="lanjutan", turns=2),  # correct, 2 turns
        _r("U1", answerable=False, abstained=True, category="tidak_terjawab"),  # refused
        _r("U2", answerable=False, answer="UKT Rp 5 juta. [1]", category="tidak_terjawab"),  # answered
    ]
    gates_off = [
        _r("A1", answer=f"{faithful} [1]", golds=["144 SKS"]),
        _r("A2", answer="Gedung Sains. [1]", golds=["Laboratorium Jaringan"], category="daftar"),
        _r("A3", answer="ETH0 [1]", golds=["ETH0"], category="lanjutan", turns=2),
        _r("U1", answerable=False, answer="Wi-Fi kampus. [1]", category="tidak_terjawab"),
        _r("U2", answerable=False, answer="UKT Rp 5 juta. [1]", category="tidak_terjawab"),
    ]
    idk_results = [  # every answerable question answered: no abstention on answerable items
        _r("q1", answer="Pasuruan, Jawa Timur [1]", golds=["Pasuruan, Jawa Timur"], category="answerable"),
        _r("q2", answer="Surabaya [1]", golds=["Batavia"], category="answerable"),
        _r("q3", answerable=False, abstained=True, category="unanswerable"),
        _r("q4", answerable=False, abstained=True, category="unanswerable"),
    ]
    for r in idk_results:
        r["gold_match"] = "any"
    return {
        "version": ev.RAW_VERSION, "machine": "- Machine: test\n", "quick": False, "limit": 0, "measure_seconds": 60.0,
        "indexes": {"sample site": {"documents": 3, "chunks": 4, "embedder": "fake", "crawl": {"fetched": 3}}},
        "consistency": [{"query": "ketua prodi?", "results": [_r(f"C{i}", answer="Supriyono [1]", golds=["Supriyono"])
                                                              for i in range(3)]}],
        "sections": {
            "dev": {"title": "Dev set (sample site)", "dataset": "answers.jsonl", "retrieval_dataset": "retrieval.jsonl",
                    "gold_match": "all", "retrieval": _retrieval(["a", "b"], ["b", "a"]),
                    "abstention_mode": "thresholds", "abstention_configured": "calibrated",
                    "answers": _answers(dev_results), "ablation_ids": ["A1", "A2", "A3", "U1", "U2"],
                    "ablations": {"gates off": _answers(gates_off),
                                  "LLM off": {"skipped": "PipelineConfig has no field use_llm in this build"}}},
            "informal": {"title": "Informal set", "gold_match": "all", "missing": "informal.jsonl does not exist"},
            "idkmrc": {"title": "IDK-MRC check split (held out)", "dataset": "IDK-MRC check", "gold_match": "any",
                       "retrieval_dataset": "check questions", "retrieval": _retrieval(["a"], ["a"]),
                       "abstention_mode": "calibrated", "abstention_configured": "calibrated",
                       "answers": _answers(idk_results), "ablation_ids": ["q1", "q3"], "ablations": {},
                       "sample": {"answerable": 2, "unanswerable": 2, "seed": 1}},
        },
    }


@pytest.fixture
def report(tmp_path) -> dict[str, str]:
    text = ev.render(_raw(), tmp_path / "evaluation.md", embedder=_BagOfWords(), img=tmp_path / "img")
    assert (tmp_path / "evaluation.md").read_text(encoding="utf-8") == text
    parts = re.split(r"^## ", text, flags=re.M)
    return {"all": text, **{p.split("\n", 1)[0]: p for p in parts[1:]}}


def _section(report: dict[str, str], prefix: str) -> str:
    return next(v for k, v in report.items() if k.startswith(prefix))


def test_outcome_sentences_follow_the_counts(report):
    dev = _section(report, "1. Dev set")
    assert "answered 2 correctly, 1 wrongly and abstained on none." in dev
    assert "Of 2 unanswerable questions it refused 1 and answered 1." in dev
    idk = _section(report, "3. IDK-MRC")
    assert "Of 2 answerable questions the bot answered 1 correctly, 1 wrongly and abstained on none." in idk
    assert "Of 2 unanswerable questions it refused all." in idk
    for text in (dev, idk):  # zero abstentions on answerable items: nothing claims some
        assert not re.search(r"abstained on [1-9]", text)
        assert "Answerable but abstained" not in text


def test_an_abstention_is_reported_when_there_is_one(tmp_path):
    raw = _raw()
    raw["sections"]["idkmrc"]["answers"]["results"][1] = _r("q2", abstained=True, golds=["Batavia"], category="answerable")
    text = ev.render(raw, tmp_path / "e.md", embedder=_BagOfWords(), img=tmp_path / "img")
    idk = text.split("## 3. IDK-MRC", 1)[1]
    assert "answered 1 correctly, 0 wrongly and abstained on 1." in idk
    assert "**Answerable but abstained** (1)" in idk
    assert "abstained on none" not in idk


def test_ablation_sentences_restate_the_table(report):
    dev = _section(report, "1. Dev set")
    assert ("**gates off** against the full pipeline: correct 2 (unchanged), wrong 1 (unchanged), abstained on "
            "answerable 0 (unchanged), refused unanswerable 1 → 0 (-1).") in dev
    row = next(line for line in dev.splitlines() if line.startswith("| gates off |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:6] == ["2", "1", "0", "0", "2"]  # correct, wrong, abstained, refused, answered
    assert "| LLM off | not run: PipelineConfig has no field use_llm in this build |" in dev


def test_by_construction_metrics_are_not_compared_with_the_thesis(report):
    text = report["all"]
    for line in text.splitlines():
        if re.search(r"faithfulness|degenerate|template", line, re.I):
            assert "thesis" not in line.lower(), line
    assert not re.search(r"\bgains?\b", text, re.I)
    dev = _section(report, "1. Dev set")
    assert "| Degenerate replies | 0 / 4 |" in dev
    assert "The guarantee did not hold" not in dev  # faithfulness 1.0, nothing degenerate, no leak


def test_a_broken_guarantee_is_reported(tmp_path):
    raw = _raw()
    raw["sections"]["dev"]["answers"]["results"][0]["context"] = ["Kalender akademik semester ganjil dimulai Agustus."]
    text = ev.render(raw, tmp_path / "e.md", embedder=_BagOfWords(), img=tmp_path / "img")
    assert "The guarantee did not hold on this run: faithfulness is 0.000, below 1.0" in text


def test_normalisation_sentence_and_missing_section(report):
    dev = _section(report, "1. Dev set")
    assert "Turning query normalisation off changed R@1 by -1.000 and MRR@10 by -0.500." in dev
    idk = _section(report, "3. IDK-MRC")
    assert "Turning query normalisation off left R@1 and MRR@10 unchanged" in idk
    assert "Not measured: informal.jsonl does not exist." in _section(report, "2. Informal")


def test_multi_turn_items_are_reported_separately(report):
    dev = _section(report, "1. Dev set")
    assert "| multi-turn | 1 | 1 | 1 / 1 (100%) | 0 | 0 / 0 |" in dev
    assert "| single-turn | 4 | 2 | 1 / 2 (50%) | 0 | 1 / 2 |" in dev


def test_fitted_on_table_and_in_sample_lines(report):
    text = report["all"]
    assert "| Colloquial lexicon (query normalisation) | external, not our data — " in text
    assert _section(report, "1. Dev set").count(
        "In-sample: The learned reader, Retrieval fusion constants, Abstention calibrator") == 1
    assert "None of the constants listed" in _section(report, "3. IDK-MRC")


def test_summary_and_render_from_json(report, tmp_path):
    assert "| Dev set (sample site) | 2 / 1 / 0 (n=3) | 1 / 1 (n=2) | 100.0% / 50.0% |" in report["all"]
    raw = json.loads(json.dumps(_raw()))  # what --raw writes and --render-from reads
    again = ev.render(raw, tmp_path / "again.md", embedder=_BagOfWords(), img=tmp_path / "img")
    assert again.split("- Measurement")[1] == report["all"].split("- Measurement")[1]


def test_kept_sections_survive(tmp_path):
    out = tmp_path / "evaluation.md"
    out.write_text("old\n<!-- answers-summary:start -->\nkept text\n<!-- answers-summary:end -->\n", encoding="utf-8")
    text = ev.render(_raw(), out, embedder=_BagOfWords(), img=tmp_path / "img")
    assert "<!-- answers-summary:start -->\nkept text\n<!-- answers-summary:end -->" in text
    assert text.startswith("# Evaluation")


def test_the_gate_in_force_is_named(report):
    assert "Abstention gate in force: `thresholds` (the configured gate is `calibrated`, but no abstention model" in (
        _section(report, "1. Dev set"))
    assert "Abstention gate in force: `calibrated`." in _section(report, "3. IDK-MRC")


@pytest.mark.parametrize(("tuned", "bm25", "verdict"), [
    (["a"], ["b", "a"], "It is above dense and bm25 on both R@1 and MRR@10."),
    (["a"], ["a"], "It is above dense on both R@1 and MRR@10, but not above bm25."),
    (["b", "a"], ["a"], "It is not above dense or bm25 on both R@1 and MRR@10.")])
def test_the_per_index_fusion_row_is_compared_from_the_numbers(tuned, bm25, verdict):
    ret = _retrieval(["b", "a"], None)
    ret["modes"]["bm25"]["global"] = metrics_for(bm25, {"a"})
    ret["modes"]["dense"]["global"] = metrics_for(["c", "b", "a"], {"a"})
    m = metrics_for(tuned, {"a"})
    ret["modes"][ev.TUNE_FUSION_ROW] = {"mode": "hybrid", "n": 1, "global": m, "per_category": {}, "seconds": 0.1}
    ret["tune_fusion_values"] = {"fusion_norm": "zscore", "dense_weight": 0.85}
    text = "\n".join(ev.retrieval_table(ret))
    assert f"| {ev.TUNE_FUSION_ROW} | 1 | {m['recall@1']:.3f} |" in text
    assert "fusion_norm = zscore, dense_weight = 0.85" in text and verdict in text


def test_target_sentence_says_met_or_missed_as_the_counts_fall():
    m = {"answerable": 20, "correct": 13, "wrong": 4, "abstained": 3, "unanswerable": 10, "refused": 8, "answered": 2}
    text = ev.target_sentence(m)
    assert "answered 85.0% of the answerable questions (target ≥ 85%: met)" in text
    assert "76.5% of those correctly (target ≥ 75%: met)" in text
    assert "refused 80.0% of the unanswerable ones (target ≥ 80%: met)" in text
    m = {**m, "correct": 10, "wrong": 6, "abstained": 4, "refused": 7, "answered": 3}
    text = ev.target_sentence(m)
    assert "answered 80.0%" in text and "(target ≥ 85%: missed)" in text
    assert "62.5% of those correctly (target ≥ 75%: missed)" in text
    assert "refused 70.0%" in text and "(target ≥ 80%: missed)" in text


def test_the_index_own_calibration_is_reported_beside_the_bundled_model(tmp_path):
    raw = _raw()
    own = [  # the index's own model: refuses more, answers less
        _r("q1", answer="Pasuruan, Jawa Timur [1]", golds=["Pasuruan, Jawa Timur"], category="answerable"),
        _r("q2", abstained=True, golds=["Batavia"], category="answerable"),
        _r("q3", answerable=False, abstained=True, category="unanswerable"),
        _r("q4", answerable=False, abstained=True, category="unanswerable"),
    ]
    for r in own:
        r["gold_match"] = "any"
    raw["sections"]["idkmrc"]["per_index"] = {**_answers(own), "abstention_model": "bench/idkmrc_tune_abstention.json",
                                              "threshold": 0.61, "fitted_on": {"idkmrc-tune": 200}, "fusion": False}
    text = ev.render(raw, tmp_path / "evaluation.md", embedder=_BagOfWords(), img=tmp_path / "img")
    assert "Answers with the index's own calibration" in text
    assert "| the index's own | 1 / 0 / 1 (n=2) | 2 / 0 (n=2) |" in text
    assert "| bundled (`generation/data/abstention.json`) | 1 / 1 / 0 (n=2) | 2 / 0 (n=2) |" in text
    assert "With the index's own calibration: It answered 50.0% of the answerable questions (target ≥ 85%: missed)" in text
    assert "the index's own calibration | 1 / 0 / 1 (n=2)" in text.split("## Summary", 1)[1]


def test_the_dev_set_is_compared_with_the_first_plan_category_by_category():
    plan = {"prosedur": (4, 5), "tidak_terjawab": (13, 13), "fakta": (14, 15)}
    lines = "\n".join(ev.first_plan_markdown({"prosedur": (2, 5), "tidak_terjawab": (12, 13), "fakta": (15, 15)}, plan))
    assert "| prosedur | 4 / 5 | 2 / 5 | -2 |" in lines
    assert "| tidak_terjawab | 13 / 13 | 12 / 13 | -1 |" in lines
    assert "| fakta | 14 / 15 | 15 / 15 | +1 |" in lines
    assert "more than one item below the first plan: prosedur (-2)" in lines
    within = "\n".join(ev.first_plan_markdown({"prosedur": (3, 5), "tidak_terjawab": (13, 13), "fakta": (14, 15)}, plan))
    assert "No category is more than one item below the first plan." in within
    resized = "\n".join(ev.first_plan_markdown({"prosedur": (3, 6), "tidak_terjawab": (13, 13), "fakta": (14, 15)}, plan))
    assert "| prosedur | 4 / 5 | 3 / 6 | not compared (n differs) |" in resized


def test_the_dev_report_carries_the_first_plan_comparison(report):
    dev = _section(report, "1.")
    assert "first plan" in dev and "| category | first plan | now | change |" in dev


def test_the_reader_is_reported_beside_the_previous_pipeline(tmp_path):
    raw = _raw()
    dev = raw["sections"]["dev"]
    previous = [dict(r) for r in dev["answers"]["results"]]
    previous[0] = _r("A1", abstained=True, golds=["144 SKS"])  # the previous pipeline abstained on A1
    previous[3] = _r("U1", answerable=False, answer="Wi-Fi kampus. [1]", category="tidak_terjawab")
    dev["answers_previous"] = _answers(previous)
    text = ev.render(raw, tmp_path / "e.md", embedder=_BagOfWords(), img=tmp_path / "img")
    section = text.split("## 1. Dev set", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith(("| reader |", f"| {ev.PREVIOUS} |"))]
    assert rows[0].startswith("| reader | 2 / 3 (67%) | 1 | 0 | 1 / 2 (50%) | 1 |")
    assert rows[1].startswith(f"| {ev.PREVIOUS} | 1 / 3 (33%) | 1 | 1 | 0 / 2 (0%) | 2 |")
    assert "No category is more than one item below the previous pipeline." in section
    summary = text.split("## Summary", 1)[1].split("\n## ", 1)[0]
    assert f"| Dev set (sample site), {ev.PREVIOUS} | 1 / 1 / 1 (n=3) | 0 / 2 (n=2) |" in summary


def test_previous_answers_are_taken_only_for_the_same_items(tmp_path):
    earlier = _raw()
    earlier["machine"] = "- Commit abc1234, generated 2026-11-25 17:00 UTC\n"
    earlier["sections"]["dev"]["answers_previous"] = earlier["sections"]["dev"]["answers"]
    earlier["sections"]["idkmrc"]["answers_previous"] = {"results": [_r("other")], "seconds": 1.0, "questions": 1}
    now = _raw()
    ev.take_previous(now, earlier)
    assert now["sections"]["dev"]["answers_previous"] == earlier["sections"]["dev"]["answers"]
    assert "answers_previous" not in now["sections"]["idkmrc"]  # other item ids: nothing taken
    text = ev.render(now, tmp_path / "e.md", embedder=_BagOfWords(), img=tmp_path / "img")
    assert "measured in an earlier run on the same items (commit abc1234" in text


def test_reader_targets_are_stated_met_or_missed():
    m = {"answerable": 300, "unanswerable": 300, "correct": 225, "refused": 200}
    text = ev.reader_target_sentence("idkmrc", m)
    assert "75.0% of the answerable questions answered correctly (target ≥ 75%: met)" in text
    assert "66.7% of the unanswerable ones refused (target ≥ 75%: missed)" in text
    text = ev.reader_target_sentence("final", {"answerable": 43, "unanswerable": 12, "correct": 30, "refused": 8})
    assert "30 of 43 answerable questions answered correctly (target ≥ 30: met)" in text
    assert "8 of 12 unanswerable ones refused (target ≥ 9: missed)" in text
    assert ev.reader_target_sentence("dev", m) == ""


def test_the_index_own_calibration_on_a_subsample_is_compared_on_the_same_questions(tmp_path):
    raw = _raw()
    previous = [
        _r("q1", answer="Pasuruan [1]", golds=["Pasuruan"], category="answerable"),
        _r("q2", answer="Batavia [1]", golds=["Batavia"], category="answerable"),
        _r("q5", answer="Bogor [1]", golds=["Surabaya"], category="answerable"),  # not in the subsample
        _r("q3", answerable=False, answer="Jakarta [1]", category="unanswerable"),
        _r("q6", answerable=False, answer="Depok [1]", category="unanswerable"),  # not in the subsample
    ]
    own = [
        _r("q1", answer="Pasuruan [1]", golds=["Pasuruan"], category="answerable"),
        _r("q2", abstained=True, golds=["Batavia"], category="answerable"),
        _r("q3", answerable=False, abstained=True, category="unanswerable"),
    ]
    for r in previous + own:
        r["gold_match"] = "any"
    raw["sections"]["idkmrc"]["answers_previous"] = _answers(previous)
    raw["sections"]["idkmrc"]["per_index"] = {**_answers(own), "abstention_model": "bench/idkmrc_tune_abstention.json",
                                              "threshold": 0.61, "fitted_on": {"idkmrc-tune": 200}, "fusion": False,
                                              "subsample": {"answerable": 2, "unanswerable": 1}}
    text = ev.render(raw, tmp_path / "evaluation.md", embedder=_BagOfWords(), img=tmp_path / "img")
    section = text.split("Answers with the index's own calibration", 1)[1]
    assert "The first 2 answerable and 1 unanswerable questions of the sample" in section
    assert "| bundled (`generation/data/abstention.json`) | 2 / 0 / 0 (n=2) | 0 / 1 (n=1) |" in section
    assert "| the index's own | 1 / 0 / 1 (n=2) | 1 / 0 (n=1) |" in section


def test_the_per_index_subsample_keeps_the_sample_order():
    items = [{"id": f"a{k}", "answerable": True} for k in range(5)] + \
            [{"id": f"u{k}", "answerable": False} for k in range(5)]
    got = ev.per_index_items(items, 2)
    assert [it["id"] for it in got] == ["a0", "a1", "u0", "u1"]
    assert ev.per_index_items(items, 0) == items


def test_site_settings_crawl_the_sample_site_offline(tmp_path):
    """One place builds the settings every bench script uses for the bundled sample site: its loopback URL is the
    only seed, private addresses are allowed (it is 127.0.0.1), there is no crawl delay and no Redis, no .env file
    is read, and a script's own settings win."""
    settings = ev.site_settings("http://127.0.0.1:8123", tmp_path / "data", answerer="rules")
    assert settings.crawl.seeds == ["http://127.0.0.1:8123/"]
    assert settings.crawl.allow_private is True
    assert settings.crawl.delay == 0.0
    assert settings.redis_url is None
    assert settings.data_dir == tmp_path / "data"
    assert settings.answers.answerer == "rules"
    assert ev.site_settings("http://127.0.0.1:8123/", tmp_path).crawl.seeds == ["http://127.0.0.1:8123/"]
    assert ev.site_settings("http://127.0.0.1:8123", tmp_path, redis_url="redis://127.0.0.1:6379/0").redis_url
