"""Question words, particles and fillers are never anchors, in their formal and colloquial spellings."""

from __future__ import annotations

import pytest

from generation.support import stem, stems, text_stems
from generation.text import anchors
from retrieval.language import (
    ANCHOR_STOPWORDS,
    COLLOQUIAL_WORDS,
    QUESTION_WORDS,
    load_lexicon,
    resolve_formal,
)


@pytest.mark.parametrize(
    "filler",
    ["dong", "ya", "sih", "min", "kak", "deh", "nih", "kok", "apa aja", "gimana", "mau nanya", "halo",
     # colloquial spellings from the lexicon
     "gmn", "gmna", "aja", "kpn", "brp", "yg", "gak", "ga", "kalo", "klo", "nanya", "donk", "dech", "knp", "udh",
     # greetings and acknowledgements around a next question
     "permisi", "assalamualaikum", "oke", "sip", "btw", "makasih", "thx"],
)
def test_filler_is_not_an_anchor(filler):
    assert anchors(f"{filler} syarat wisuda {filler}") == ["syarat", "wisuda"]


def test_informal_questions_keep_only_their_topic():
    assert anchors("halo kak, mau nanya dong: syarat KKN apa aja ya?") == ["syarat", "kkn"]
    assert anchors("jdwal krs kpn ya kak") == ["jdwal", "krs"]
    assert anchors("brp sks skripsi min") == ["sks", "skripsi"]
    assert stems("gimana cara milih dospem sih") == ["milih", "dospem"]


@pytest.mark.parametrize(("text", "anchor"), [
    ("Jakarta adalah ibu kota Indonesia", "ibukota"),  # a compound written apart meets its fused spelling
    ("surat izin dari orang tua", "orangtua"),
    ("planet dalam tata surya kita", "tatasurya"),
])
def test_a_compound_written_apart_in_the_evidence_meets_its_fused_spelling(text, anchor):
    assert anchor in text_stems(text)
    # only neighbours a space joins: a sentence or clause boundary between them makes no compound
    assert "ibukota" not in text_stems("Surat untuk ibu. Kota asal dicatat") | text_stems("untuk ibu, kota asal")


@pytest.mark.parametrize(("question", "topic"), [
    ("darimana asal tari saman", ["asal", "tari", "saman"]),  # "dari mana" written as one word
    ("kemana mahasiswa lapor kalau sakit", ["mahasiswa", "lapor", "sakit"]),
    ("dimanakah letak perpustakaan", ["letak", "perpustakaan"]),
    ("seberapa luas kampus itu", ["luas", "kampus"]),
    ("mengapakah candi itu dibangun", ["candi", "dibangun"]),
])
def test_fused_question_words_are_not_anchors(question, topic):
    # a question word with its preposition ("di/ke/dari" + "mana") or its particle ("-kah") fused on asks, it does not
    # name the topic: it must never count as an anchor the evidence lacks
    assert [w for w in anchors(question) if w not in ANCHOR_STOPWORDS] == topic


def test_colloquial_spellings_come_from_the_lexicon():
    lexicon = load_lexicon()
    function = ANCHOR_STOPWORDS | QUESTION_WORDS
    expected = {s for s in lexicon if s.isalpha() and all(w in function for w in resolve_formal(s, lexicon).split())}
    assert expected - COLLOQUIAL_WORDS <= {"mk", "sy", "yg", "dgn", "utk", "brp", "gmn", "dmn"}
    assert "mk" not in COLLOQUIAL_WORDS  # the glossary's "mata kuliah", though the lexicon reads "maka"
    assert {"kalo", "enggak"} <= COLLOQUIAL_WORDS  # the lexicon's informal targets


def test_acronyms_in_capitals_stay_anchors():
    assert "si" in anchors("prodi SI dulu namanya apa")
    assert "si" not in anchors("prodi si dulu namanya apa sih")
    assert anchors("siapa dosen mk basis data") == ["dosen", "mk", "basis", "data"]


def test_shorthand_still_meets_its_spelled_out_form():
    assert {"dospem", "krs", "prodi"} <= text_stems("Dosen pembimbing dan kartu rencana studi program studi")
    # and the other way round: the long form the normaliser adds next to a shorthand is met by the shorthand
    assert {"indeks", "prestasi", "kumulatif"} <= text_stems("Syarat IPK minimal 3,00")


@pytest.mark.parametrize(("text", "anchor"), [
    ("peninggalan Kerajaan Riau-Lingga", "riau"),  # a name joined to another name
    ("peninggalan Kerajaan Riau-Lingga", "lingga"),
    ("sebuah sub-genre dari metal", "genre"),  # a prefix joined to a word
    ("Suku Tionghoa-Indonesia", "tionghoa"),
    ("surah dalam Al-Qur'an", stem("Qur'an")),  # a part with an apostrophe stems as the question's word does
    ("kirim lewat e-mail resmi", "email"),  # a word students write without the hyphen
])
def test_a_hyphenated_word_in_the_evidence_holds_its_parts(text, anchor):
    # the BM25 analyzer indexes the parts of a hyphenated word, so retrieval finds the page for "riau"; the anchor
    # check must see the same word there, or a page that answers looks as if it missed the question
    assert anchor in text_stems(text)
    assert "riau-lingga" in text_stems("Kerajaan Riau-Lingga")  # the whole word stays


@pytest.mark.parametrize("word", ["bapak", "ibu", "pak", "hal", "bagian", "mulai", "masuk", "syarat", "jadwal",
                                  "kemarin", "besok", "sekarang"])
def test_general_words_and_answer_type_words_are_soft_anchors(word):
    from generation.support import is_soft, stem

    assert is_soft(stem(word), word)


@pytest.mark.parametrize("word", ["skripsi", "wisuda", "akreditasi", "dosen", "kkn", "informatika"])
def test_topic_words_are_full_anchors(word):
    from generation.support import is_soft, stem

    assert not is_soft(stem(word), word)


def test_a_soft_anchor_the_evidence_lacks_barely_lowers_coverage():
    """ "kapan pak dosen mulai bimbingan": a page on "jadwal bimbingan dosen" answers it although it never says
    "pak" or "mulai"; the missing topic word "bimbingan" costs much more."""
    from generation.support import SOFT_ANCHOR_WEIGHT, anchor_coverage, idf_weights, stems

    anchor = list(dict.fromkeys(stems("kapan pak dosen mulai bimbingan skripsi")))
    page = set(stems("jadwal bimbingan skripsi dengan dosen pembimbing"))
    other = set(stems("jadwal ujian skripsi dengan dosen penguji"))
    weights = idf_weights(anchor, [page, other, set(stems("kalender akademik"))])
    assert weights[stems("pak")[0]] == SOFT_ANCHOR_WEIGHT == weights[stems("mulai")[0]]
    assert anchor_coverage(anchor, page, weights) > 0.8
    assert anchor_coverage(anchor, other, weights) < anchor_coverage(anchor, page, weights) - 0.2


def _lexicon_clipped() -> list[tuple[str, str]]:
    """The outside lexicon's two-word entries whose slang clips both words (8 of 91)."""
    from generation.support import clipped_compounds

    return sorted((s, f) for s, f in load_lexicon().items()
                  if s.isalpha() and len(f.split()) == 2 and s in clipped_compounds(f))


def test_the_lexicons_clipped_compounds_meet_the_words_they_clip():
    from generation.support import stem

    found = _lexicon_clipped()
    assert {("warkop", "warung kopi"), ("salfok", "salah fokus"), ("murmer", "murah meriah")} <= set(found)
    assert len(found) >= 8
    for short, long in found:
        assert stem(short) in text_stems(f"Di sini ada {long.title()} untuk mahasiswa.")


def test_clipped_compounds_need_two_long_neighbouring_words():
    from generation.support import clipped_compounds

    assert "dakom" not in clipped_compounds("dan komputer")  # "dan" is too short to take part
    assert "jarkom" not in clipped_compounds("jaringan, lalu komputer")  # not neighbours


@pytest.mark.parametrize("word", ["sapa", "biar", "dimn", "npa"])
def test_chat_spellings_of_function_words_are_not_anchors(word):
    assert anchors(f"pembina himpunan {word} bisa ikut") == ["pembina", "himpunan", "ikut"]


@pytest.mark.parametrize(("short", "long"), [("lab", "laboratorium"), ("mhs", "mahasiswa"), ("perpus", "perpustakaan"),
                                             ("sempro", "seminar proposal"), ("kkn", "kuliah kerja nyata"),
                                             ("proker", "program kerja"), ("ormawa", "organisasi mahasiswa"),
                                             ("upload", "unggah"), ("online", "daring"), ("acc", "setuju"),
                                             ("lt", "lantai"), ("gd", "gedung")])
def test_campus_shorthand_meets_its_long_form_in_evidence(short, long):
    """A page that spells a shorthand out contains the student's anchor, also when the long form is one word."""
    from retrieval.language import GLOSSARY

    assert GLOSSARY[short] == long
    assert set(stems(short)) <= text_stems(f"Kepala {long.title()} dipilih tiap tahun")
    assert set(stems(long)) <= text_stems(f"Kepala {short.upper()} dipilih tiap tahun")


@pytest.mark.parametrize(("level", "name"), [("s1", "Sarjana"), ("s2", "Magister"), ("s3", "Doktor")])
def test_degree_level_meets_its_name(level, name):
    """"S1"/"S2"/"S3" are the degree levels a page names "Program Sarjana", "Magister", "Doktor"."""
    assert level in text_stems(f"Program {name} Teknik Sipil")
    assert stems(name.lower())[0] in text_stems(f"Lulusan {level.upper()} Teknik Sipil")


@pytest.mark.parametrize("word", ["singkatan", "kepanjangan"])
def test_asking_what_an_acronym_stands_for_is_an_answer_type(word):
    from generation.support import is_soft, stem

    assert is_soft(stem(word), word)


@pytest.mark.parametrize(("page", "anchor"), [("lulus dalam waktu kurang dari enam bulan", "6"),
                                              ("masa studi paling lama 7 tahun", "tujuh"),
                                              ("sekitar 80% lulusan bekerja", "persen"),
                                              ("diskon 50 persen untuk anak yatim", "%")])
def test_numbers_meet_their_spelled_form(page, anchor):
    """Pages write small numbers as words ("enam bulan") and percentages as "%": a question typed the other way
    still finds its number on the page."""
    assert anchor in text_stems(page)


@pytest.mark.parametrize(("text", "number"), [("IPK minimal 2,75 untuk mendaftar", "2,75"),
                                              ("nilai TOEFL saya 3,5 tahun lalu", "3,5"),
                                              ("biaya 1,5 juta per semester", "1,5")])
def test_a_decimal_comma_keeps_the_number_whole(text, number):
    """Indonesian writes decimals with a comma: "2,75" is one number, not the anchors "2" and "75" (which a page
    saying "3,75" would half match)."""
    assert number in stems(text)
    assert number in text_stems(text)
    assert "75" not in stems("IPK minimal 2,75")


def test_a_comma_between_words_or_after_a_space_still_separates():
    assert stems("semester 3, 4 dan 5") == stems("semester 3 4 dan 5")
    assert "ip" in stems("ip,semester")


@pytest.mark.parametrize("pronoun", ["ku", "mu"])
def test_a_detached_possessive_clitic_is_not_an_anchor(pronoun):
    """Chat often writes the possessive apart ("nilai ku", "dosen mu"): a pronoun, never the topic."""
    assert anchors(f"nilai {pronoun} cukup untuk beasiswa") == ["nilai", "cukup", "beasiswa"]


@pytest.mark.parametrize("short", ["max", "maks"])
def test_max_is_shorthand_for_maksimal(short):
    from retrieval.language import GLOSSARY

    assert GLOSSARY[short] == "maksimal"
    assert set(stems(short)) <= text_stems("beban studi maksimal 22 SKS")


@pytest.mark.parametrize(("question_number", "page"), [
    ("2,9", "maksimal 24 SKS jika IP minimal 3,00, dan maksimal 20 SKS jika di bawah 3,00"),
    ("420", "Pendaftar wajib memiliki skor TOEFL paling sedikit 450."),
    ("110", "Skripsi boleh diambil setelah lulus minimal 120 SKS."),
    ("5", "Magang terbuka bagi mahasiswa minimal semester 6."),
    ("3,8", "Predikat cumlaude untuk IPK di atas 3,50."),
])
def test_a_value_the_page_states_a_bound_for_is_on_the_page(question_number, page):
    """A student gives their own value ("IP saya 2,9"); the page states the rule as a bound ("di bawah 3,00"). The
    page answers the question, so the number counts as present (docs/answers.md, "Numbers")."""
    from generation.support import within_stated_bounds

    assert within_stated_bounds([question_number], page) == {question_number}


@pytest.mark.parametrize(("question_number", "page"), [
    ("2,9", "Jumlah mahasiswa baru tahun ini 300 orang."),  # a number, but no bound
    ("2024", "Pendaftaran dibuka minimal 2000 pendaftar."),  # a year is named, never compared
    ("5", "Skripsi boleh diambil setelah lulus minimal 120 SKS."),  # another magnitude: another quantity
    ("3,2", "IPK minimal untuk beasiswa ini tidak ditentukan."),  # a bound word without a number
])
def test_no_bound_no_match(question_number, page):
    from generation.support import within_stated_bounds

    assert within_stated_bounds([question_number], page) == set()


@pytest.mark.parametrize("token", ["2024", "2,75", "144", "ke-5", "20rb", "1.500", "24/25"])
def test_numbers_are_held_to_the_page(token):
    """A number or year the student gives ("semester 5", "angkatan 2024", "ke-5", "20rb") must be on the cited page."""
    from generation.support import is_number_anchor

    assert all(is_number_anchor(s) for s in stems(token))


@pytest.mark.parametrize("code", ["s1", "S2", "d3", "IF-301", "COVID-19", "F-16", "mp3"])
def test_codes_that_start_with_a_letter_are_names_not_numbers(code):
    """A degree level or an identifier ("S1", "D3", "IF-301") is a name with a digit in it: an anchor weighed by its
    rarity like any name, not a number the cited chunk must repeat (a programme's pages rarely repeat "S1")."""
    from generation.support import is_number_anchor

    assert stems(code) and not any(is_number_anchor(s) for s in stems(code))


@pytest.mark.parametrize("question", ["perpustakaan buka jam berapa", "jam bukanya kapan", "minggu perpus buka ga? sampe jam brp",
                                      "lab tutup pukul berapa", "jam operasional ruang baca"])
def test_opening_hours_words_are_soft_next_to_a_clock_word(question):
    """"buka"/"tutup" beside "jam"/"pukul" ask for service hours, which a page gives as "Jam layanan: 08.00–15.00"."""
    from generation.support import idf_weights, is_soft, stems

    q = stems(question)
    hours = [a for a in q if a in ("buka", "tutup", "operasional")]
    assert hours and all(is_soft(a, question_stems=q) for a in hours)
    assert all(idf_weights(q, [set()])[a] == idf_weights(["jam"], [set()])["jam"] for a in hours)


@pytest.mark.parametrize("question", ["pendaftaran wisuda dibuka kapan", "kapan kantin tutup permanen"])
def test_opening_words_without_a_clock_word_name_an_event(question):
    """Without a clock word, "dibuka"/"tutup" name an event the evidence must state ("pendaftaran dibuka kapan")."""
    from generation.support import is_soft, stems

    q = stems(question)
    assert not any(is_soft(a, question_stems=q) for a in q if a in ("buka", "tutup"))
