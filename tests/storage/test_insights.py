"""The question log masks personal data before storing it; admin answers are versioned; /hapus forgets a user."""

from __future__ import annotations

import pytest

from storage.insights import InsightsStore, mask_personal


@pytest.mark.parametrize("text", [
    "Nomor saya 081234567890, tolong hubungi",
    "Nomor saya 0812-3456-7890, tolong hubungi",
    "Nomor saya 0812 3456 789, tolong hubungi",
    "Nomor saya +62 812-3456-7890, tolong hubungi",
    "Nomor saya +6281234567890, tolong hubungi",
    "Nomor saya 6281234567890, tolong hubungi",
    "Nomor saya 62 812 3456 7890, tolong hubungi",
    "Nomor saya (031) 555-0192, tolong hubungi",
])
def test_indonesian_phone_numbers_are_masked(text):
    masked = mask_personal(text)
    assert masked == "Nomor saya [nomor telepon], tolong hubungi", masked


def test_emails_are_masked_and_ordinary_numbers_stay():
    assert mask_personal("kirim ke budi.santoso+pmb@gmail.com ya") == "kirim ke [email] ya"
    for text in ("Berapa UKT semester 5 tahun 2024?", "Biayanya Rp 620.000.000 atau Rp 6.500.000?",
                 "NIM 2201 angkatan 2022, IPK 3,50, 144 SKS"):
        assert mask_personal(text) == text


def test_a_question_is_masked_before_it_is_stored(tmp_path):
    store = InsightsStore(tmp_path / "insights.sqlite3")
    store.record(trace_id="t1", channel="whatsapp", user_key="whatsapp:6281234567890",
                 question="Saya 081234567890 / ani@mail.com, kapan wisuda?", answer="", abstained=True)
    raw = (tmp_path / "insights.sqlite3").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("insights.sqlite3-*"))
    assert b"081234567890" not in raw and b"ani@mail.com" not in raw and b"6281234567890" not in raw
    (row,) = store.questions()
    assert row["question"] == "Saya [nomor telepon] / [email], kapan wisuda?"
    assert "user_hash" not in row and "user" not in str(row)


def test_forget_user_removes_only_that_users_questions(tmp_path):
    store = InsightsStore(tmp_path / "i.sqlite3")
    store.record(trace_id="a", channel="web", user_key="web:1", question="q1", answer="", abstained=True)
    store.record(trace_id="b", channel="web", user_key="web:2", question="q2", answer="", abstained=True)
    assert store.forget_user("web:1") == 1
    assert [r["question"] for r in store.questions()] == ["q2"]


def test_admin_answers_are_versioned_expire_and_delete(tmp_path):
    store = InsightsStore(tmp_path / "i.sqlite3")
    first = store.save_answer(question="Kapan wisuda?", answer="Wisuda bulan Oktober.", author="admin-web")
    second = store.save_answer(question="Kapan wisuda?", answer="Wisuda tanggal 12 Oktober.", author="telegram:1",
                               answer_id=first.id, link="https://prodi.example.ac.id/wisuda")
    assert (second.id, second.version) == (first.id, 2)
    assert [a.answer for a in store.history(first.id)] == ["Wisuda bulan Oktober.", "Wisuda tanggal 12 Oktober."]
    assert store.active_answers()[0].author == "telegram:1"
    store.save_answer(question="Kapan wisuda?", answer="x", author="a", answer_id=first.id, expires="2020-01-01")
    assert store.active_answers() == []
    assert store.delete_answer(first.id, "admin") and store.answers() == []
    assert len(store.answers(include_deleted=True)) == 1
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        store.save_answer(question="q", answer="a", author="x", expires="besok")
    with pytest.raises(ValueError, match="https://"):
        store.save_answer(question="q", answer="a", author="x", link="javascript:alert(1)")


def test_traces_are_masked_when_serve_writes_them(tmp_path):
    import json

    from generation.telemetry import TelemetryWriter

    writer = TelemetryWriter(tmp_path / "traces.jsonl", redact=mask_personal)
    writer.write({"answer": "x", "trace": {"query": "Saya +62 812 3456 7890, a@b.co.id", "steps": [
        {"step": "rewrite", "query": "nomor 0812-3456-7890"}], "latency_ms": {"total": 1.5}}, "ts": 1.0})
    record = json.loads((tmp_path / "traces.jsonl").read_text(encoding="utf-8"))
    assert record["trace"]["query"] == "Saya [nomor telepon], [email]"
    assert record["trace"]["steps"][0]["query"] == "nomor [nomor telepon]"
    assert record["trace"]["latency_ms"] == {"total": 1.5} and record["ts"] == 1.0
