"""Asides: what a student says about themselves or why they ask is not part of the question (generation.text.split_aside).
Examples are made up for this test; none comes from an evaluation set."""

from __future__ import annotations

import pytest

from generation.compose import combine_parts
from generation.text import split_aside, split_questions
from generation.types import Reply, Source


@pytest.mark.parametrize(
    ("message", "core", "aside"),
    [
        # a reason or purpose after the question
        ("jadwal remedial kapan ya? mau mudik soalnya", "jadwal remedial kapan ya?", "mau mudik soalnya"),
        ("nilai minimal toefl brp kak? buat daftar beasiswa luar", "nilai minimal toefl brp kak?", "buat daftar beasiswa luar"),
        ("ruang dosen wali dmn, mau minta paraf", "ruang dosen wali dmn", "mau minta paraf"),
        ("kapan batas revisi? karena aku masih magang", "kapan batas revisi?", "karena aku masih magang"),
        # … with no punctuation: the reason starts after the question word and its particles
        ("nomor wa tu admin apa ya mau konfirmasi pembayaran", "nomor wa tu admin apa ya", "mau konfirmasi pembayaran"),
        ("jam layanan perpus sampai kapan sih soalnya mau pinjam buku", "jam layanan perpus sampai kapan sih",
         "soalnya mau pinjam buku"),
        ("cek plagiasi maksimal brp persen biar lolos", "cek plagiasi maksimal brp persen", "biar lolos"),
        # who the student is, before or after the question
        ("aku anak farmasi, boleh ikut klub catur gak?", "boleh ikut klub catur gak?", "aku anak farmasi"),
        ("gimana cara ganti judul? aku udah semester 9 😭", "gimana cara ganti judul?", "aku udah semester 9 😭"),
        ("saya mahasiswa pindahan, syarat konversi nilai apa aja", "syarat konversi nilai apa aja", "saya mahasiswa pindahan"),
        # an acknowledgement of the previous reply before the next question
        ("oke siap. trus ruang sidangnya dmn?", "trus ruang sidangnya dmn?", "oke siap"),
        ("baik makasih, kalau jadwal wisuda kapan", "kalau jadwal wisuda kapan", "baik makasih"),
    ],
)
def test_asides_are_split_off(message, core, aside):
    assert split_aside(message) == (core, aside)


@pytest.mark.parametrize(
    "message",
    [
        # the purpose is the question itself, or a qualifier inside it
        "mau daftar wisuda syaratnya apa aja",
        "syarat buat ikut lomba debat apa",
        "kapan buat jadwal ujian susulan",
        "berapa sks buat lulus",
        "aku mau tanya jadwal ujian susulan kapan",
        "untuk angkatan 2022 wajib magang berapa bulan?",
        # a second question is not an aside
        "kapan yudisium? wisudanya kapan?",
        "lab kimia dmn? kepala labnya siapa",
        # nothing would be left
        "mau tanya dong",
        "soalnya bingung",
        # Wikipedia-style questions: nothing to split
        "Siapakah penemu mesin uap?",
        "prof. dr. budi santosa s3 nya dimana",
        "Pada tahun berapa kerajaan itu runtuh karena serangan musuh?",
    ],
)
def test_no_aside(message):
    assert split_aside(message) == (message, "")


# -- two questions in one message ------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("message", "parts"),
    [
        ("ada klub catur ga di kampus? pembinanya siapa", ["ada klub catur ga di kampus?", "pembinanya siapa"]),
        ("gedung rektorat dmn sih? trus jam bukanya kapan?", ["gedung rektorat dmn sih?", "trus jam bukanya kapan?"]),
        # a clause that is no question belongs to the question before it
        ("jadwal remedial kapan ya? mau mudik soalnya", ["jadwal remedial kapan ya? mau mudik soalnya"]),
        ("halo kak? biaya wisuda brp", ["halo kak? biaya wisuda brp"]),
        # one question
        ("syarat ambil magang apa aja", ["syarat ambil magang apa aja"]),
        ("Siapakah penemu mesin uap?", ["Siapakah penemu mesin uap?"]),
        ("kapan?? kapan??", ["kapan?? kapan??"]),
    ],
)
def test_split_questions(message, parts):
    assert split_questions(message) == parts


def _part(answer, *sources, abstained=False, stop="STOP_CONFIDENT"):
    return Reply(answer=answer, abstained=abstained, sources=tuple(Source(url=u, title=u) for u in sources),
                 confidence=0.5, iterations=1, stop_reason=stop)


def test_combined_reply_renumbers_citations_and_merges_sources():
    out = combine_parts([
        ("ada klub catur?", _part("Ada, Klub Catur Mahasiswa. [1] Latihan di aula. [2]", "/klub/", "/aula/")),
        ("pembinanya siapa", _part("Pembinanya Budi Santosa, M.T. [1] Ruang aula. [2]", "/dosen/", "/aula/")),
    ])
    assert out.answer == ("Ada, Klub Catur Mahasiswa. [1] Latihan di aula. [2]\n\n"
                             "Pembinanya Budi Santosa, M.T. [3] Ruang aula. [2]")
    assert [s.url for s in out.sources] == ["/klub/", "/aula/", "/dosen/"]
    assert not out.abstained and out.iterations == 2


def test_combined_reply_says_which_part_it_could_not_answer():
    out = combine_parts([
        ("ada klub catur?", _part("Ada, Klub Catur Mahasiswa. [1]", "/klub/")),
        ("iurannya brp", _part("Maaf, …", abstained=True, stop="ABSTAIN_UNSUPPORTED")),
    ])
    assert out.answer.startswith("Ada, Klub Catur Mahasiswa. [1]\n\n")
    assert '"iurannya brp"' in out.answer and "belum menemukan" in out.answer
    assert not out.abstained and out.stop_reason == "STOP_CONFIDENT"
    # nothing answered: the first part's abstention, as for one question
    first = _part("Maaf, … Topik terkait …", abstained=True, stop="ABSTAIN_LOW_RETRIEVAL")
    out = combine_parts([("a?", first), ("b?", _part("Maaf", abstained=True))])
    assert out == first


def test_combined_reply_does_not_repeat_what_an_earlier_part_said():
    same = "Lab kimia punya 2 server GPU. [1]"
    out = combine_parts([("lab kimia ada gpu ga?", _part(same, "/lab/")), ("gpu apa", _part(same, "/lab/"))])
    assert out.answer == same
    out = combine_parts([
        ("ada klub catur?", _part("Klub Catur berlatih di aula. [1]", "/klub/")),
        ("pembinanya siapa", _part("Pembinanya Budi Santosa, M.T. [1] Klub Catur berlatih di aula. [2]", "/dosen/", "/klub/")),
    ])
    assert out.answer == "Klub Catur berlatih di aula. [1]\n\nPembinanya Budi Santosa, M.T. [2]"
