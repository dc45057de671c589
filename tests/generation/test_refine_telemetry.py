"""Query refinement validators (docs/answers.md, "Refinement validators"), follow-up rewriting, the rotating telemetry file."""

from __future__ import annotations

import json

import pytest

from generation.refine import expand_query, jaccard, rewrite_followup, validate_refinement
from generation.telemetry import TelemetryWriter
from storage.models import Message


def _validate(cosine, d_orig=0.2, d_cand=0.3, orig=("A", "B", "C"), cand=("A", "B"), followup=False,
              original="Siapa kaprodi informatika?", candidate="Siapa ketua program studi informatika?"):
    return validate_refinement(
        original, candidate, cosine, followup=followup, orig_sources=set(orig), cand_sources=set(cand),
        orig_top_distance=d_orig, cand_top_distance=d_cand,
    )


def test_seed_004_worked_examples():
    assert _validate(0.88).reason == "low_similarity"  # §5.3: 0.88 < 0.9 → BLOCK
    assert _validate(0.92, d_orig=0.2, d_cand=0.4).reason == "top_distance_worse"  # 0.4 > 0.35 → BLOCK
    ok = _validate(0.92, d_orig=0.2, d_cand=0.3, orig=("A", "B", "C", "D", "E"), cand=("A", "B"))
    assert ok.accepted and ok.jaccard == 0.4  # KEEP
    assert _validate(0.95, orig=("A", "B", "C"), cand=("D", "E")).reason == "low_jaccard"


def test_followup_rewrite_skips_the_similarity_gate_but_not_entities():
    assert _validate(0.5, followup=True).accepted
    changed = _validate(0.95, original="Siapa dosen basis data?", candidate="Siapa dosen jaringan?")
    assert changed.reason == "entities_changed"


def test_jaccard():
    assert jaccard({"a", "b", "c"}, {"d", "e"}) == 0.0
    assert jaccard(set(), set()) == 1.0


def test_expand_query_expands_shorthand_only():
    assert expand_query("siapa kaprodi dong?") == "siapa ketua program studi?"
    assert expand_query("Berapa SKS skripsi?") == "Berapa SKS skripsi?"


def test_followups_use_the_previous_user_question():
    history = [Message("user", "Mata kuliah semester 3 apa saja?"), Message("assistant", "Basis Data, ...")]
    r = rewrite_followup("yang 3 SKS saja?", history)
    assert r.rewritten and "semester 3" in r.query and "3" in r.query.split()
    r = rewrite_followup("ada yang lain?", history)
    assert r.rewritten and r.query.startswith("Mata kuliah semester 3")
    # a self-contained question is left alone
    r = rewrite_followup("Berapa IPK minimal untuk beasiswa prestasi?", history)
    assert not r.rewritten
    assert not rewrite_followup("yang lain?", []).rewritten


def test_telemetry_rotates_at_the_size_limit(tmp_path):
    path = tmp_path / "telemetry" / "traces.jsonl"
    writer = TelemetryWriter(path, max_bytes=10_000, backups=2)
    for i in range(60):
        writer.write({"i": i, "pad": "x" * 400})
    assert path.exists() and path.stat().st_size <= 10_000
    rotated = path.with_name("traces.jsonl.1")
    assert rotated.exists()
    assert not path.with_name("traces.jsonl.3").exists()
    last = [json.loads(line) for line in path.read_text().splitlines()]
    assert last[-1]["i"] == 59


def _chat(*user_turns: str) -> list[Message]:
    out: list[Message] = []
    for t in user_turns:
        out += [Message(role="user", text=t), Message(role="assistant", text="(jawaban sebelumnya)")]
    return out


@pytest.mark.parametrize(
    ("previous", "followup", "kept", "gone"),
    [
        # the same head with a new value: the value is replaced, the rest of the question kept
        ("jadwal UAS semester ganjil kapan?", "kalau semester genap?", {"uas", "genap", "kapan"}, {"ganjil"}),
        ("ruang dosen di lantai 3 ada apa saja?", "kalo yang lantai 4?", {"ruang", "4"}, {"3"}),
        ("dekan fakultas syariah siapa?", "kalau dekan fakultas ekonomi?", {"dekan", "ekonomi", "siapa"}, {"syariah"}),
        # a new subject: the previous subject goes, what was asked about it stays
        ("magang berapa SKS?", "kalau KKN?", {"kkn", "berapa", "sks"}, {"magang"}),
        ("pak Budi lulusan S3 mana?", "kalau bu Sari?", {"sari", "s3", "mana"}, {"budi"}),
    ],
)
def test_what_about_x_replaces_the_subject_or_its_value(previous, followup, kept, gone):
    r = rewrite_followup(followup, _chat(previous))
    got = set(r.query.lower().replace("?", " ").split())
    assert r.rewritten and kept <= got and not (gone & got), r.query


def test_what_about_x_with_its_own_question_carries_nothing_old():
    history = _chat("Siapa dosen bidang Intelligent System?", "emailnya apa?")
    r = rewrite_followup("kalau ketua prodinya siapa?", history)
    got = set(r.query.lower().replace("?", " ").split())
    assert not ({"email", "emailnya", "intelligent", "system"} & got), r.query
