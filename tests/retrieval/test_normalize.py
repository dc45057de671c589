"""QueryNormalizer on informal questions, with a real vocabulary (the analyzer over a small prodi site) and real
aliases mined from it; the bundled lexicon as shipped."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.aliases import mine_aliases
from retrieval.analyzer import Analyzer
from retrieval.language import (
    FILLERS,
    GLOSSARY,
    LEXICON_PATH,
    colloquial_spellings,
    load_lexicon,
    resolve_formal,
)
from retrieval.normalize import QueryNormalizer, collapse_elongation
from tests.retrieval.conftest import CORPUS

# A small prodi site: the retrieval corpus plus pages that define abbreviations and name lecturers.
SITE = [text for *_, text in CORPUS] + [
    "Program Studi Teknik Informatika (TI) berdiri pada tahun 2000. Sebelumnya nama program studi ini adalah "
    "Sistem Informasi (SI).",
    "Jadwal pengisian Kartu Rencana Studi (KRS) diumumkan oleh bagian akademik setiap awal semester.",
    "Syarat mengikuti Kuliah Kerja Nyata (KKN) adalah telah menempuh 100 SKS.",
    "Mahasiswa memilih dosen pembimbing tugas akhir sesuai bidang keahlian.",
    "Koordinator Skripsi, Dr. Muhammad Ainul Yaqin, M.Kom., menetapkan jadwal seminar. Hubungi Dr. Muhammad "
    "Ainul Yaqin, M.Kom. melalui email yaqin@informatika.example.ac.id.",
    "Ketua Program Studi, Supriyono, M.Kom., membuka acara. Sekretaris: Shoffin Nahwa Utama, M.T.",
    "Tujuan utama kegiatan ini adalah memperkenalkan laboratorium. Biaya kuliah dibayar tiap semester.",
]


@pytest.fixture(scope="module")
def vocabulary() -> Counter[str]:
    analyzer = Analyzer()
    return Counter(term for text in SITE for term in set(analyzer(text)))


@pytest.fixture(scope="module")
def normalizer(vocabulary) -> QueryNormalizer:
    return QueryNormalizer(aliases=mine_aliases(SITE), vocabulary=vocabulary)


INFORMAL = [
    # slang + shorthand + the site's own abbreviation (kept, long form added) + a vocative dropped
    ("brp sks skripsi TI min", "berapa sks skripsi TI Teknik Informatika"),
    ("jdwal krs kpn ya kak", "jadwal krs Kartu Rencana Studi kapan"),
    ("kalo mau ambil KKN syaratnya apa aja", "kalau mau ambil KKN Kuliah Kerja Nyata syarat apa saja"),
    ("dospem TA gimana milihnya", "dospem dosen pembimbing TA tugas akhir bagaimana memilih"),
    ("prodi SI dulu namanya apa sih", "prodi program studi SI Sistem Informasi dulu nama apa"),
    ("Halo kak, Jdwal KRS kapan?", "jadwal KRS Kartu Rencana Studi kapan?"),
    ("email pak yaqin apa ya", "email pak yaqin Muhammad Ainul Yaqin apa"),
    ("kpn smt 5 mulai dong", "kapan semester 5 mulai"),
    ("biaya kuliah mahal bangettt gak sih", "biaya kuliah mahal banget tidak"),
    ("gmn cara daftar pmb", "bagaimana cara daftar pmb penerimaan mahasiswa baru"),
]


@pytest.mark.parametrize(("query", "expected"), INFORMAL)
def test_informal_questions(normalizer, query, expected):
    assert normalizer.normalize(query) == expected


@pytest.mark.parametrize("query", [q for q, _ in INFORMAL])
def test_idempotent_on_the_table(normalizer, query):
    once = normalizer.normalize(query)
    assert normalizer.normalize(once) == once


def test_expand_false_adds_nothing(normalizer):
    assert normalizer.normalize("brp sks skripsi TI min", expand=False) == "berapa sks skripsi TI"
    assert normalizer.normalize("email pak yaqin apa ya", expand=False) == "email pak yaqin apa"
    assert normalizer.normalize("kpn smt 5 mulai dong", expand=False) == "kapan semester 5 mulai"


def test_formal_questions_are_left_alone(normalizer):
    for query in ["kapan pendaftaran mahasiswa baru jalur mandiri", "syarat mengajukan proposal skripsi",
                  "Siapa koordinator tugas akhir?", "Berapa SKS Basis Data?"]:
        assert normalizer.normalize(query) == query


def test_digits_codes_emails_and_names_are_kept(normalizer):
    query = "brp sks IF-301 sm 3.5 kirim ke yaqin@informatika.example.ac.id atau Bu Ratna Wijayakusuma gmn"
    out = normalizer.normalize(query)
    for kept in ("IF-301", "3.5", "yaqin@informatika.example.ac.id", "Bu Ratna Wijayakusuma"):
        assert kept in out
    assert out.startswith("berapa sks IF-301") and out.endswith("bagaimana")
    # a name after an honorific is never "repaired", even if it looks like slang or a typo
    assert normalizer.normalize("nomor pak gw") == "nomor pak gw"


def test_all_caps_tokens_are_not_mapped_by_the_lexicon(vocabulary):
    lexicon = load_lexicon()
    assert lexicon["si"] == "sih" and lexicon["dr"] == "dari"  # the noise the rule guards against
    plain = QueryNormalizer(vocabulary={k: v for k, v in vocabulary.items() if k not in {"si", "dr"}})
    assert plain.normalize("prodi SI itu apa") == "prodi program studi SI itu apa"
    assert "si" not in plain.normalize("prodi si itu apa").split()  # lower-case: the particle, dropped
    assert plain.normalize("beda TI dan DKV") == "beda TI dan DKV"


def test_site_alias_needs_capitals_when_it_is_also_a_particle(normalizer):
    assert "Sistem Informasi" in normalizer.normalize("prodi SI apa")
    assert "Sistem Informasi" not in normalizer.normalize("itu apa si")


def test_lexicon_rule_keeps_site_words_and_drops_unusable_targets(vocabulary):
    lexicon = load_lexicon()
    site = dict(vocabulary) | {"dapet": 1}
    n = QueryNormalizer(vocabulary=site)
    assert n.normalize("dapet beasiswa") == "dapet beasiswa"  # the site says "dapet": keep it
    assert "dapet" not in n.lexicon and QueryNormalizer(vocabulary=vocabulary).lexicon["dapet"] == "dapat"
    # "baper" → "bawa perasaan": neither word is on the site nor a function word, so the entry does not apply
    assert lexicon["baper"] == "bawa perasaan" and "baper" not in n.lexicon
    assert n.normalize("baper banget") == "baper banget"
    stats = n.stats()
    assert stats["lexicon_entries"] == sum(1 for s in lexicon if s.isalpha() and len(s) > 1)
    assert 0 < stats["lexicon_applied"] < stats["lexicon_entries"]


def test_every_applied_entry_follows_the_rule(normalizer):
    from retrieval.language import FUNCTION_WORDS

    for slang, formal in normalizer.lexicon.items():
        assert not normalizer.known(slang), slang
        assert all(w in FUNCTION_WORDS or w in FILLERS or normalizer.known(w) for w in formal.split()), slang


def test_typo_correction_against_the_vocabulary(normalizer, vocabulary):
    assert "jadwal" in vocabulary
    assert normalizer.normalize("jdwal seminar") == "jadwal seminar"  # a letter left out
    assert normalizer.normalize("jadwall seminar") == "jadwal seminar"  # one too many
    assert normalizer.normalize("jawdal seminar") == "jadwal seminar"  # two swapped
    assert normalizer.normalize("jdwall seminar") == "jdwall seminar"  # two slips: unchanged
    assert normalizer.normalize("jadwal semimar") == "jadwal seminar"  # one letter mistyped (seven letters or more)
    assert normalizer.normalize("jadwal zeminar") == "jadwal zeminar"  # … but never the first
    assert normalizer.normalize("jadwel seminar") == "jadwel seminar"  # … nor in a shorter word
    assert normalizer.normalize("ktua prodi").startswith("ktua")  # shorter than five letters: unchanged
    no_typos = QueryNormalizer(vocabulary=vocabulary, typo_correction=False)
    assert no_typos.normalize("jdwal seminar") == "jdwal seminar"


def test_fillers_next_to_numbers_are_kept(normalizer):
    assert normalizer.normalize("IPK min 3 bisa?") == "IPK indeks prestasi kumulatif min 3 bisa?"
    assert normalizer.normalize("dong") == "dong"  # nothing else: the text is kept rather than emptied
    assert normalizer.normalize("   ") == ""


def test_without_an_index_only_function_words_are_mapped():
    n = QueryNormalizer()
    assert n.normalize("gmn cara daftar yg cepat") == "bagaimana cara daftar yang cepat"
    assert n.normalize("daftar yg online") == "daftar yang daring"  # the glossary applies without an index too
    assert n.normalize("jdwal krs") == "jdwal krs kartu rencana studi"  # no vocabulary: no typo correction


def test_glossary_is_the_one_generation_uses():
    from generation import refine

    assert refine.GLOSSARY is GLOSSARY
    for short in ("kaprodi", "dospem", "matkul", "krs", "ukt"):
        assert short in GLOSSARY
    # a long form never contains another shorthand (so expanding twice changes nothing)
    assert not {w for long in GLOSSARY.values() for w in long.split()} & set(GLOSSARY)


def test_lexicon_helpers():
    assert LEXICON_PATH.exists()
    from retrieval.language import CHAT_SUPPLEMENT

    assert len(load_lexicon(supplement=False)) == 4330
    lexicon = load_lexicon()
    assert len(lexicon) == 4330 + len(CHAT_SUPPLEMENT)
    assert resolve_formal("gak", lexicon) == "tidak"  # gak → enggak → tidak
    assert resolve_formal("dh", lexicon) == "deh"  # dh → dah → deh
    assert collapse_elongation("bangettt") == ("banget", "bangett")
    spellings = colloquial_spellings({"bagaimana", "saja", "kapan"})
    assert {"gimana", "gmn", "aja", "kpn"} <= spellings and "jadwal" not in spellings


_POOL = ["brp", "sks", "IF-301", "jdwal", "krs", "KRS", "TI", "ti", "pak", "yaqin", "Yaqin", "gmn", "aja", "min",
         "3", "3.5", "kak", "sih", "bangettt", "syaratnya", "a@b.ac.id", "dospem", "prodi", "SI", "si", ",", "?",
         "Dr.", "Muhammad", "Ainul", "kalo", "mau", "ambil", "KKN", "Halo", "ya", "gak", "milihnya", "email"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_POOL), min_size=1, max_size=10))
def test_idempotent_and_keeps_digits_codes_emails(normalizer, parts):
    query = " ".join(parts)
    once = normalizer.normalize(query)
    assert normalizer.normalize(once) == once
    for keep in ("IF-301", "3.5", "a@b.ac.id"):
        assert query.count(keep) <= once.count(keep)
    assert Counter(re.findall(r"\d+", query)) <= Counter(re.findall(r"\d+", once))


@pytest.mark.parametrize(
    ("typed", "site_word"),
    # entries of the outside colloquial lexicon (retrieval/data/colloquial_lexicon.csv)
    [("nyari", "mencari"), ("bedain", "membedakan"), ("diajarin", "diajari"), ("benahin", "membenahi"),
     ("buktiin", "membuktikan"), ("dengarin", "mendengarkan"), ("cobain", "mencoba")],
)
def test_colloquial_verb_forms_become_the_form_the_site_uses(typed, site_word):
    from retrieval.normalize import colloquial_forms

    assert site_word in colloquial_forms(typed)
    n = QueryNormalizer(vocabulary={site_word: 3, "dosen": 5, "lab": 4}, lexicon={})
    assert n.normalize(f"dosen yg {typed} lab siapa").split()[2] == site_word


def test_a_colloquial_verb_with_a_clitic_becomes_the_form_the_site_uses():
    # "-nya" on a colloquial verb: the clitic comes off, then the verb's morphology gives the site's form
    n = QueryNormalizer(vocabulary={"diumumkan": 3, "nilai": 5, "kapan": 4}, lexicon={})
    assert n.normalize("nilai diumuminnya kapan").split()[1] == "diumumkan"


def test_colloquial_forms_recover_half_the_lexicons_verb_entries():
    from retrieval.normalize import colloquial_forms

    lexicon = load_lexicon()
    tried = {s: f for s, f in lexicon.items() if s.isalpha() and " " not in f and colloquial_forms(s)}
    hits = sum(f in colloquial_forms(s) for s, f in tried.items())
    assert len(tried) >= 500 and hits / len(tried) >= 0.45


def test_colloquial_verb_forms_need_the_site_to_use_them():
    n = QueryNormalizer(vocabulary={"dosen": 5}, lexicon={})
    assert "ngajar" in n.normalize("dosen yg ngajar siapa").split()
    assert QueryNormalizer(vocabulary={"mengajar": 1}, lexicon={}).normalize("Ngajar") == "mengajar"


def test_anchor_form_spells_out_slang_the_site_does_not_use(normalizer):
    """For the anchors (``expand=False``) a lexicon word is written formally even when the site never uses its
    formal form: it is missing from the site either way, and its formal spelling lets the support check weigh it
    as what it is ("tgl" is "tanggal", an answer-type word). Retrieval keeps the typed word then."""
    assert not normalizer.known("tanggal") and not normalizer.known("pakai")
    assert normalizer.normalize("tgl brp", expand=False) == "tanggal berapa"
    assert normalizer.normalize("tgl brp") == "tgl berapa"
    assert normalizer.normalize("pake apa", expand=False) == "pakai apa"
    # idempotent in this form too
    once = normalizer.normalize("tgl pake brp", expand=False)
    assert normalizer.normalize(once, expand=False) == once


@pytest.mark.parametrize(("typed", "formal"), [("diisiin", "diisikan"), ("dikumpulin", "dikumpulkan"),
                                               ("dibacain", "dibacakan")])
def test_anchor_form_spells_out_colloquial_verbs_by_morphology(normalizer, typed, formal):
    """A colloquial verb neither the site nor the lexicon knows ("dikumpulin") gets its formal form in the anchor form
    from the colloquial morphology and the root dictionary: its stem ("kumpul") is then weighed as what it is,
    not as a word no page contains. Retrieval keeps the typed word."""
    assert not normalizer.known(typed) and not normalizer.known(formal)
    assert normalizer.normalize(f"acara itu {typed} kapan", expand=False) == f"acara itu {formal} kapan"
    assert typed in normalizer.normalize(f"acara itu {typed} kapan").split()


def test_anchor_form_leaves_dictionary_words_and_unknown_roots_alone(normalizer):
    """A word of the root dictionary is not read as slang ("makan" is no "memakan"), and a form whose stem is no
    Indonesian word stays as typed ("login")."""
    assert normalizer.normalize("makan siang di mana", expand=False).split()[0] == "makan"
    assert "login" in normalizer.normalize("cara login siakad", expand=False).split()


@pytest.mark.parametrize(("typed", "formal"), [("sapa", "siapa"), ("spa", "siapa"), ("dimn", "di mana"),
                                               ("npa", "kenapa"), ("biar", "agar"), ("dikasih", "diberi")])
def test_chat_spellings_the_lexicon_lacks_are_supplemented(typed, formal):
    """Question and function words in chat spellings the bundled lexicon has no entry for (``CHAT_SUPPLEMENT``):
    the lexicon's own entries win, and a site that uses the word keeps it."""
    from retrieval.language import CHAT_SUPPLEMENT

    assert typed in CHAT_SUPPLEMENT and typed in load_lexicon()
    assert resolve_formal(typed, load_lexicon()) == formal
    n = QueryNormalizer(vocabulary={"dosen": 3, "wali": 2}, lexicon=None)
    assert n.normalize(f"dosen wali {typed}", expand=False) == f"dosen wali {formal}"
    assert QueryNormalizer(vocabulary={"dosen": 3, typed: 1}).normalize(f"dosen {typed}") == f"dosen {typed}"


def test_the_supplement_never_overrides_the_lexicon():
    from retrieval.language import CHAT_SUPPLEMENT

    raw = load_lexicon.__wrapped__(LEXICON_PATH, supplement=False)
    assert not set(CHAT_SUPPLEMENT) & set(raw)


def test_informal_targets_of_the_lexicon_are_mapped_once_more():
    # the lexicon's "ntar" → "entar" and "ndak" → "indak" are informal or regional themselves
    lexicon = load_lexicon()
    assert resolve_formal("ntar", lexicon) == "nanti"
    assert resolve_formal("ndak", lexicon) == "tidak"


def test_loanword_typed_without_its_apostrophe_or_hyphen(vocabulary):
    """Arabic loanwords keep an apostrophe or a hyphen on a site ("Ma'had", "Jum'at", "Al-Qur'an") that students
    leave out; the site's spelling is the form to use."""
    site = {k: v for k, v in vocabulary.items() if k != "jumat"} | {"jum'at": 3, "al-qur'an": 2, "ma'had": 4}
    n = QueryNormalizer(vocabulary=site)
    assert n.normalize("kajian jumat jam brp") == "kajian jum'at jam berapa"
    assert n.normalize("hafalan alquran wajib gak") == "hafalan al-qur'an wajib tidak"
    assert n.normalize("mahad putri dimana") == "ma'had putri dimana"
    assert QueryNormalizer(vocabulary=vocabulary).normalize("mahad") == "mahad"  # the site has no such word
    # a site that writes the word both ways keeps the student's spelling
    assert QueryNormalizer(vocabulary=site | {"jumat": 1}).normalize("kajian jumat") == "kajian jumat"


def test_clitic_on_a_short_shorthand(vocabulary):
    """"ipnya", "tanya" stays: a clitic comes off a two-letter base only when that base is shorthand the site or
    the glossary knows."""
    n = QueryNormalizer(vocabulary=dict(vocabulary) | {"ip": 2, "ta": 3})
    assert n.normalize("kalo ipnya 2,9?", expand=False) == "kalau ip 2,9?"
    assert n.normalize("mau tanya") == "mau tanya"  # a function word, not "ta" + "-nya"
    assert QueryNormalizer(vocabulary=vocabulary).normalize("ipnya brp") == "ipnya berapa"  # "ip" unknown here


@pytest.mark.parametrize(("typed", "reader", "search"), [
    ("siapa dospemnya", "siapa dospem", "siapa dospem dosen pembimbing"),
    ("matkulnya berapa sks", "matkul berapa sks", "matkul mata kuliah berapa sks"),
])
def test_a_clitic_comes_off_glossary_shorthand_of_any_length(normalizer, typed, reader, search):
    """A clitic on a longer glossary shorthand comes off as on a two-letter one ("ipnya"), and the shorthand is then
    written out for the search: "dospemnya" was left as typed, so neither the search nor the reader saw "dosen
    pembimbing"."""
    assert normalizer.normalize(typed, expand=False) == reader
    assert normalizer.normalize(typed) == search


@pytest.mark.parametrize(("typed", "full"), [("23/24", "2023/2024"), ("2024/25", "2024/2025"), ("19/20", "2019/2020")])
def test_academic_year_shorthand_is_written_out(normalizer, typed, full):
    """A two-digit academic year ("smt genap 24/25") is the page's "2024/2025"; other slashes stay as typed."""
    assert normalizer.normalize(f"jadwal uas genap {typed}", expand=False) == f"jadwal uas genap {full}"
    assert normalizer.normalize(f"jadwal uas genap {typed}") == f"jadwal uas genap {full}"


@pytest.mark.parametrize("typed", ["24/26", "3/4", "12/2024", "2023/2024"])
def test_other_slashes_stay(normalizer, typed):
    assert normalizer.normalize(f"nilai {typed} berapa", expand=False) == f"nilai {typed} berapa"


def test_a_dictionary_word_is_never_a_typing_slip(vocabulary):
    """One letter apart is not enough when the typed word is itself Indonesian ("kuota" is no slip of "kota")."""
    from retrieval.analyzer import is_dictionary_word

    n = QueryNormalizer(vocabulary=dict(vocabulary) | {"kota": 4, "pendaftaran": 3})
    assert is_dictionary_word("kuota") and not is_dictionary_word("pendaftarn")
    assert n.normalize("kuota jalur mandiri") == "kuota jalur mandiri"
    assert n.normalize("pendaftarn jalur mandiri") == "pendaftaran jalur mandiri"


def test_a_clipped_word_is_the_one_site_word_it_starts(vocabulary):
    """Students clip long words ("admin" for "administrasi", "yudis" for "yudisium"): a word the site does not use
    and no dictionary knows, of four letters or more, is the site's word it starts when exactly one site word starts
    with it. A clipping two site words share, a dictionary word and a short stub stay as typed."""
    site = dict(vocabulary) | {"administrasi": 7, "yudisium": 5, "informatika": 9, "informasi": 4}
    n = QueryNormalizer(vocabulary=site)
    assert n.normalize("admin prodi siapa") == "administrasi prodi program studi siapa"
    assert n.normalize_with_rules("yudis kapan")[1][0] == {"rule": "clipping", "from": "yudis", "to": "yudisium"}
    assert n.normalize("infor prodi") == "infor prodi program studi"  # informatika or informasi: left alone
    assert n.normalize("adm prodi") == "adm prodi program studi"  # three letters: too short to tell
    assert QueryNormalizer(vocabulary=vocabulary).normalize("admin") == "admin"  # no site word starts with it


def test_a_letter_typed_for_the_digit_it_looks_like_is_the_site_s_name(vocabulary):
    """Names with a digit ("B1ON", "L0OP") are typed with the letter that looks like it: an unknown word that is a
    site word once an "o" reads as "0" (or an "l"/"i" as "1") is that word, when exactly one site word is."""
    site = dict(vocabulary) | {"r0bo": 3, "n1te": 2}
    n = QueryNormalizer(vocabulary=site)
    assert n.normalize_with_rules("pembina robo siapa")[1][0] == {"rule": "lookalike", "from": "robo", "to": "r0bo"}
    assert n.normalize("jadwal nlte") == "jadwal n1te"
    assert QueryNormalizer(vocabulary=vocabulary).normalize("pembina robo") == "pembina robo"


def test_a_typing_slip_under_a_clitic_is_repaired(vocabulary):
    """ "emialnya": the clitic comes off and the base's slip is repaired, as "emial" alone would be."""
    n = QueryNormalizer(vocabulary=dict(vocabulary) | {"email": 5})
    assert n.normalize("emial apa", expand=False) == "email apa"
    assert n.normalize("emialnya apa", expand=False) == "email apa"
