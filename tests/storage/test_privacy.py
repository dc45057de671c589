"""The masking rules (storage/privacy.py, used by the question log as ``storage.insights.mask_personal``): each class
of personal data a student types is masked; the numbers a realistic question holds are not. And the control
characters the entry strips (issue 33, items 5 and 7)."""

from __future__ import annotations

import re

import pytest

from storage.insights import InsightsStore, mask_personal


@pytest.mark.parametrize("number", [
    "+1 415 555 0100", "+44 20 7946 0958", "+62 812-3456-7891", "+6281234567891", "+61 2 9876 5432",
    "+49 (30) 1234-5678", "+65 9123 4567",
])
def test_international_numbers_are_masked(number):
    assert mask_personal(f"nomor saya {number}, tolong hubungi") == "nomor saya [nomor telepon], tolong hubungi"


@pytest.mark.parametrize("number", [
    "8123456789", "812345678", "081234567890", "6281234567890", "0812.3456.7891", "0812 3456 789",
    "085712345678",
])
def test_mobile_numbers_written_without_a_plus_are_masked(number):
    assert mask_personal(f"WA {number} ya") == "WA [nomor telepon] ya"


@pytest.mark.parametrize("nik", [
    "3174012345678901", "3174 0123 4567 8901", "3174.0123.4567.8901", "317401.234567.8901", "3174-0123-4567-8901",
])
def test_a_nik_is_masked(nik):
    assert mask_personal(f"NIK saya {nik}, KTP hilang") == "NIK saya [NIK], KTP hilang"


def test_other_long_digit_runs_are_masked():
    assert mask_personal("NIM saya 1301194123 belum bisa KRS") == "NIM saya [nomor] belum bisa KRS"
    assert mask_personal("rekening 1234567890123") == "rekening [nomor]"


@pytest.mark.parametrize("email", [
    "andi.pratama@gmail.com", "Andi_P@mail.ui.ac.id", "budi.santoso+pmb@gmail.com", "andi @ gmail.com",
    "andi.pratama [at] gmail [dot] com", "andi(at)gmail.com", "andi.pratama(at)gmail(dot)co(dot)id",
])
def test_emails_are_masked_also_written_around_spam_filters(email):
    assert mask_personal(f"email saya {email} ya") == "email saya [email] ya"


@pytest.mark.parametrize("question", [
    "Berapa UKT semester 5 tahun 2024?",
    "Biayanya Rp 620.000.000 atau Rp 6.500.000?",
    "Uang pangkal Rp 620000000 atau Rp. 15000000, bisa dicicil?",
    "Biaya wisuda Rp 1.250.000,00 atau 750000000 rupiah?",
    "NIM 2201 angkatan 2022, IPK 3,50, 144 SKS",
    "KRS dibuka 01-10-2026 sampai 15-10-2026 jam 08.00-16.00 WIB?",
    "Jadwal UTS 05/10/2026 pukul 13.30, ruang 0301?",
    "Tahun ajaran 2025/2026 semester ganjil mulai kapan?",
    "Kurikulum 2020 2021 2022 2023 bedanya apa?",
    "Mata kuliah IF2201 dan MKU-101 berapa SKS? Prasyarat IF1101?",
    "Kuota 62 mahasiswa, maksimal 24 sks per semester, minimal TOEFL 450?",
    "SK Rektor No. 1234/UN1.P/KPT/2024 tentang wisuda",
    "Nilai pi 3.14159265358979 dipakai di kalkulus?",
    "Berapa skor minimal 3.00 dan 2,75 untuk cumlaude?",
])
def test_the_numbers_of_realistic_questions_stay(question):
    assert mask_personal(question) == question


def test_the_question_log_stores_none_of_them(tmp_path):
    store = InsightsStore(tmp_path / "insights.sqlite3")
    question = ("Saya di luar negeri +1 415 555 0100, WA 8123456789, NIK 3174012345678901, "
                "email andi.pratama@gmail.com, kapan KRS?")
    store.record(trace_id="t1", channel="web", user_key="web:s", question=question, answer="", abstained=True)
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("insights.sqlite3*"))
    for typed in (b"415 555 0100", b"8123456789", b"3174012345678901", b"andi.pratama@gmail.com"):
        assert typed not in raw
    assert store.questions()[0]["question"] == ("Saya di luar negeri [nomor telepon], WA [nomor telepon], NIK [NIK], "
                                               "email [email], kapan KRS?")
    store.close()


# --- control characters -----------------------------------------------------------------------------------------

def test_c0_and_c1_controls_and_nul_are_stripped():
    from storage.privacy import strip_controls

    c0 = "".join(chr(c) for c in range(0x20) if chr(c) not in "\t\n\x0b\x0c\r")
    c1 = "".join(chr(c) for c in range(0x80, 0xA0) if c != 0x85)
    assert strip_controls(f"kapan{c0}KRS{c1}\x7f?") == "kapanKRS?"


def test_whitespace_controls_become_a_space_or_a_newline():
    from storage.privacy import strip_controls

    assert strip_controls("a\tb\x0bc\x0cd") == "a b c d"
    assert strip_controls("a\r\nb\rc\x85d\u2028e\u2029f\ng") == "a\nb\nc\nd\ne\nf\ng"


def test_bidi_controls_and_invisible_characters_are_stripped_and_joiners_stay():
    from storage.privacy import strip_controls

    bidi = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
    assert strip_controls(f"{bidi}kapan KRS?{bidi}") == "kapan KRS?"
    assert strip_controls("ka\u200bpan\u2060 K\u00adRS\ufeff?") == "kapan KRS?"
    family = "👨\u200d👩\u200d👧"
    assert strip_controls(f"halo {family} می\u200cخواهم") == f"halo {family} می\u200cخواهم"


def test_the_entry_cleans_before_it_masks_so_hidden_characters_hide_no_number():
    from storage.privacy import clean_incoming

    assert clean_incoming("  WA 0812\u200b3456\x007891, NIK 3174\u2060012345678901 \x00") == \
        "WA [nomor telepon], NIK [NIK]"
    assert not re.search(r"\d{4}", clean_incoming("andi\u200b.pratama@gmail.com 0812-3456-7891"))
