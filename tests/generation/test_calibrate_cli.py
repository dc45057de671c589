"""`python -m bot calibrate` end to end on the sample site with the real model: it labels the site's own questions,
refits the abstention model's operating point, saves it under DATA_DIR, and the next answer uses it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _env(data_dir: Path, site: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "WHATSAPP_", "SITE_", "REDIS_"))}
    env.update({"DATA_DIR": str(data_dir), "SITE_SEEDS": f"{site}/", "CRAWL_ALLOW_PRIVATE_NETWORKS": "true",
                "CRAWL_DELAY_SECONDS": "0", "PYTHONPATH": str(ROOT)})
    return env


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True, env=env, timeout=1800,
                          cwd=env["DATA_DIR"])


@pytest.mark.integration
def test_calibrate_moves_the_operating_point_and_the_next_answer_uses_it(tmp_path: Path, sample_site: str) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    env = {**_env(data_dir, sample_site), "ANSWERER": "rules"}  # the calibrated gate over hand signals
    assert _cli(env, "reindex", "--json").returncode == 0
    dev = [json.loads(line) for line in (ROOT / "tests/data/eval/answers.jsonl").read_text().splitlines() if line.strip()]
    answerable = [d for d in dev if d["answerable"] and not d.get("conversation")][:4]
    unanswerable = [d for d in dev if not d["answerable"] and not d.get("conversation")][:4]
    dataset = tmp_path / "site.jsonl"
    dataset.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in answerable + unanswerable))

    # a site that wants every question answered that reached the gate: the threshold drops to the lowest p
    result = _cli(env, "calibrate", "--dataset", str(dataset), "--target-refusal", "0", "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["items"] == 8 and report["refitted"] == "threshold"
    # retrieval's fusion constants need at least 20 questions that name their pages: eight leave them alone
    assert report["fusion"]["changed"] is False and "at least 20" in report["fusion"]["message"]
    assert not list((data_dir / "index" / "versions").glob("*/fusion.json"))
    assert report["after"]["threshold"] < report["before"]["threshold"]
    saved = data_dir / "calibration" / "abstention.json"
    assert Path(report["model"]) == saved and saved.exists()
    model = json.loads(saved.read_text())
    assert model["meta"]["site_dataset"] == "site.jsonl" and model["threshold"] == pytest.approx(report["after"]["threshold"], abs=1e-4)

    # the next answer reads the site's model: its confidence is the model's probability, compared with the new point
    gates = []
    for item in unanswerable + answerable:  # facts-table answers settle before the gate; one that reaches it is enough
        asked = json.loads(_cli(env, "ask", item["query"], "--json").stdout)
        gates = [s for s in asked["trace"]["steps"] if s["step"] == "calibrated_gate"]
        if gates:
            break
    assert gates, "no question reached the calibrated gate"
    assert gates[0]["threshold"] == pytest.approx(model["threshold"], abs=1e-4)

    # a bad dataset is one clear message, not a traceback
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x", "query": "", "answerable": True}) + "\n")
    result = _cli(env, "calibrate", "--dataset", str(bad))
    assert result.returncode == 2 and "Traceback" not in result.stderr and "query" in result.stderr


@pytest.mark.integration
def test_calibrate_refits_the_readers_threshold_and_the_next_answer_uses_it(tmp_path: Path, sample_site: str) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    env = {**_env(data_dir, sample_site), "ANSWERER": "reader"}
    assert _cli(env, "reindex", "--json").returncode == 0
    dev = [json.loads(line) for line in (ROOT / "tests/data/eval/answers.jsonl").read_text().splitlines() if line.strip()]
    items = ([d for d in dev if d["answerable"] and not d.get("conversation")][:4]
             + [d for d in dev if not d["answerable"] and not d.get("conversation")][:4])
    dataset = tmp_path / "site.jsonl"
    dataset.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in items))
    # refuse every unanswerable question: the threshold rises above every unanswerable reply's probability
    result = _cli(env, "calibrate", "--dataset", str(dataset), "--target-refusal", "1", "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["items"] == 8 and report["refitted"].startswith("the reader's threshold")
    assert report["after"]["refused_unanswerable"] == 1.0
    saved = data_dir / "calibration" / "reader.json"
    assert Path(report["model"]) == saved
    threshold = json.loads(saved.read_text())["threshold"]
    assert threshold == pytest.approx(report["after"]["threshold"], abs=1e-4)
    gates = []
    for item in items:
        asked = json.loads(_cli(env, "ask", item["query"], "--json").stdout)
        gates = [s for s in asked["trace"]["steps"] if s["step"] == "reader_gate"]
        if gates:
            break
    assert gates and gates[0]["threshold"] == pytest.approx(threshold, abs=1e-4)


@pytest.mark.integration
@pytest.mark.postgres
def test_with_database_url_the_calibration_reaches_a_host_with_an_empty_data_dir(tmp_path: Path,
                                                                                  sample_site: str) -> None:
    """Issue 31: `calibrate` on host A publishes reader.json to PostgreSQL; `ask` on host B, which has nothing in
    its DATA_DIR, fetches the index version and the threshold and its gate uses A's threshold."""
    from tests.auxil.postgres import fresh_schema

    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    dev = [json.loads(line) for line in (ROOT / "tests/data/eval/answers.jsonl").read_text().splitlines() if line.strip()]
    items = ([d for d in dev if d["answerable"] and not d.get("conversation")][:4]
             + [d for d in dev if not d["answerable"] and not d.get("conversation")][:4])
    dataset = tmp_path / "site.jsonl"
    dataset.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in items))
    with fresh_schema() as (url, _name):
        a = {**_env(a_dir, sample_site), "ANSWERER": "reader", "DATABASE_URL": url}
        b = {**_env(b_dir, sample_site), "ANSWERER": "reader", "DATABASE_URL": url}
        assert _cli(a, "reindex", "--json").returncode == 0
        result = _cli(a, "calibrate", "--dataset", str(dataset), "--target-refusal", "1", "--json")
        assert result.returncode == 0, result.stderr[-2000:]
        assert "published calibration/reader.json to PostgreSQL" in result.stderr
        threshold = json.loads((a_dir / "calibration" / "reader.json").read_text())["threshold"]
        gates = []
        for item in items:
            asked = _cli(b, "ask", item["query"], "--json")
            assert asked.returncode == 0, asked.stderr[-2000:]
            gates = [s for s in json.loads(asked.stdout)["trace"]["steps"] if s["step"] == "reader_gate"]
            if gates:
                break
        assert (b_dir / "calibration" / "reader.json").read_bytes() == (a_dir / "calibration" / "reader.json").read_bytes()
        assert gates and gates[0]["threshold"] == pytest.approx(threshold, abs=1e-4)
