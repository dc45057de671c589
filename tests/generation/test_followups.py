"""Follow-ups that follow the conversation (docs/answers.md, "Follow-ups"): classes of follow-up, each with made-up
examples (no sample-site or evaluation item)."""

from __future__ import annotations

from generation.refine import rewrite_followup
from storage.models import Message

ABSTAINED = "Maaf, saya belum menemukan informasi yang cukup di situs program studi untuk menjawab pertanyaan itu."


def _words(query: str) -> set[str]:
    return {w.strip(",.") for w in query.lower().replace("?", " ").split()}


def _ask(followup: str, *turns: tuple[str, str]):
    history: list[Message] = []
    for user, reply in turns:
        history += [Message("user", user), Message("assistant", reply)]
    return rewrite_followup(followup, history)


# -- names from the previous reply ---------------------------------------------------------------------------------

def test_reply_names_are_not_carried_when_the_previous_question_named_its_subject():
    # the previous question asked *where* the reading room is: "-nya" points at the room, not at the person the
    # (wrong) reply happened to name
    r = _ask("jam bukanya kapan?", ("perpustakaan jurusan di gedung mana?", "Ruang Joko Susilo, M.T.: Gedung C."))
    got = _words(r.query)
    assert r.rewritten and {"perpustakaan", "jurusan"} <= got and not ({"joko", "susilo"} & got), r.query


def test_reply_names_are_carried_when_the_reply_named_the_person_asked_for():
    r = _ask("emailnya?", ("siapa pembina klub robotik?", "Pembina klub robotik adalah Rina Wulandari, M.T."))
    got = _words(r.query)
    assert {"email", "rina", "wulandari"} <= got or {"emailnya", "rina", "wulandari"} <= got, r.query


def test_a_titled_name_is_the_person_even_after_a_role_introduced_by_oleh():
    # "… dipimpin oleh Ketua Jurusan, Hendra Gunawan, M.T.": the role before the name is not the person
    r = _ask("ruangannya dmn?", ("siapa ketua jurusan kimia?",
                                 "Wisuda periode Maret diikuti 40 mahasiswa yang dipimpin oleh Ketua Jurusan, "
                                 "Hendra Gunawan, M.T. [1]"))
    got = _words(r.query)
    assert {"hendra", "gunawan"} <= got, r.query


def test_reply_names_are_not_carried_when_the_reply_named_no_person():
    # a "siapa" question whose reply names no one did not answer it: nothing of the reply is carried
    r = _ask("emailnya?", ("siapa pembina klub robotik?", "Klub ini terbuka bagi mahasiswa Kelas Malam."))
    got = _words(r.query)
    assert {"klub", "robotik"} <= got and not ({"kelas", "malam"} & got), r.query
    r = _ask("emailnya?", ("siapa pembina klub robotik?", ABSTAINED))
    assert not ({"maaf", "situs"} & _words(r.query)), r.query


def test_dia_resolves_to_the_person_the_reply_named_for_a_who_question():
    r = _ask("dia ngajar apa lagi selain itu?",
             ("dosen yang mengampu statistika siapa?", "Statistika diampu oleh Andi Pratama, M.Kom. [1]"))
    got = _words(r.query)
    assert {"andi", "pratama", "ngajar"} <= got and not ({"statistika", "mengampu"} & got), r.query
    # no person in the reply: "dia" stays unresolved and the previous description is kept
    r = _ask("beliau ngajar apa lagi?", ("dosen yang mengampu statistika siapa?", "Statistika adalah mata kuliah wajib."))
    got = _words(r.query)
    assert "statistika" in got and "wajib" not in got, r.query


def test_beliau_is_the_person_the_last_reply_named_whatever_was_asked():
    # "beliau" is said of a person only: after a reply that gave one person's field, it is that person, and the
    # field asked before ("email") is not carried into the new question
    r = _ask("beliau mengampu mata kuliah apa saja?",
             ("sekretaris jurusan siapa?", "Sekretaris Jurusan: Andi Pratama, M.Kom. [1]"),
             ("emailnya apa ya", "Email Andi Pratama, M.Kom.: andi@kampus.ac.id."))
    got = _words(r.query)
    assert {"andi", "pratama", "mengampu"} <= got and not ({"email", "sekretaris"} & got), r.query
    # "dia" may be said of a thing ("dia buka jam berapa?" of a lab): after a question that asked no one, it is not
    # taken for the person the reply happened to name
    r = _ask("dia buka jam berapa?", ("lab jaringan di mana?", "Lab jaringan di Gedung C; kepala lab Andi Pratama, M.Kom."))
    assert "andi" not in _words(r.query), r.query


# -- a possessive "-nya" after an attribute points back ------------------------------------------------------------

def test_an_attribute_with_a_possessive_word_keeps_the_subject_of_a_chain():
    # "jadwal latihannya" = its practice schedule: an attribute of the previous subject, not a new subject
    r = _ask("kalo jadwal latihannya?", ("klub robotik itu klub apa?", ABSTAINED),
             ("ketuanya siapa", "Klub ini menerima anggota baru setiap semester."))
    got = _words(r.query)
    assert {"robotik", "jadwal"} <= got and "ketua" not in got and "ketuanya" not in got, r.query
    # in a first question "-nya" may mark the subject itself: it stays
    r = _ask("syaratnya apa?", ("beasiswanya apa aja", ABSTAINED))
    assert "beasiswa" in _words(r.query) or "beasiswanya" in _words(r.query), r.query
    r = _ask("jam tutupnya berapa?", ("kantin teknik ada di mana?", "Kantin ada di Gedung C."))
    assert {"kantin", "teknik", "jam"} <= _words(r.query), r.query


# -- a new attribute replaces the previous one -----------------------------------------------------------------------

def test_a_new_attribute_replaces_a_procedure_word():
    r = _ask("trus syaratnya apa aja?", ("gmn sih alur pengajuan cuti kuliah", ABSTAINED))
    got = _words(r.query)
    assert {"syaratnya", "cuti", "kuliah"} <= got or {"syarat", "cuti", "kuliah"} <= got, r.query
    assert not ({"alur", "trus", "terus"} & got), r.query
    r = _ask("biayanya berapa?", ("bagaimana prosedur wisuda?", "Wisuda diadakan dua kali setahun."))
    got = _words(r.query)
    assert "wisuda" in got and "prosedur" not in got, r.query


def test_a_new_possessive_word_replaces_the_one_the_previous_follow_up_asked():
    # "sampulnya?" then "tintanya?": each "-nya" word is what that follow-up asks about the same subject, so the
    # second one no longer carries the first one's attribute
    r = _ask("tintanya warna apa?", ("laporan magang dijilid pakai apa?", "Laporan dijilid lakban hitam."),
             ("sampulnya?", "Sampul laporan berwarna biru."))
    got = _words(r.query)
    assert {"laporan", "magang", "tinta"} <= got and not ({"sampul", "sampulnya"} & got), r.query
    # a unit after a number is a value the previous question set ("yang 3 SKS"), not an attribute it asked
    r = _ask("dosen pengampunya siapa?", ("matkul smt 4 yg 2 sks apa aja?", "Mata kuliah semester 4, 2 SKS (1): X."))
    assert "sks" in _words(r.query), r.query
    # a "-nya" word the previous question already had is its subject, not a new attribute
    r = _ask("laporannya dikumpul kapan?", ("laporan magang dijilid pakai apa?", "Laporan dijilid lakban hitam."))
    assert {"laporan", "magang"} <= _words(r.query) or "laporannya" in _words(r.query), r.query


# -- numbers: a decimal or a range is one number; a restated value replaces the old one --------------------------------

def test_a_restated_decimal_value_replaces_the_old_one():
    r = _ask("kalo ipknya 3,1?", ("ipk ku 3,6 bisa daftar beasiswa apa", ABSTAINED))
    got = _words(r.query)
    assert "3,1" in got and "3,6" not in got and not ({"3", "6", "1"} & got), r.query
    assert "ipknya" not in got and "ipk" in got, r.query
    r = _ask("kalo ipnya 2,5?", ("ip semester ku 3,4 boleh ambil berapa sks", ABSTAINED))
    got = _words(r.query)
    assert {"ip", "2,5", "sks"} <= got and not ({"3,4", "3", "4", "ipnya"} & got), r.query


def test_another_value_of_the_same_facet_replaces_the_old_one():
    # "pilihan" after "wajib", "genap" after "ganjil", "malam" after "pagi": one value of a facet replaces the other
    r = _ask("yg pilihan nya?", ("matkul wajib semester 3 apa aja", "Mata kuliah semester 3, wajib (2): …"))
    got = _words(r.query)
    assert {"pilihan", "semester", "3"} <= got and "wajib" not in got, r.query
    r = _ask("kalo yang genap?", ("jadwal uas ganjil kapan", "UAS ganjil: 5–16 Januari 2026 [1]"))
    got = _words(r.query)
    assert {"genap", "uas"} <= got and "ganjil" not in got, r.query
    r = _ask("kalo kelas malam?", ("kuliah kelas pagi mulai jam brp", ABSTAINED))
    got = _words(r.query)
    assert "malam" in got and "pagi" not in got, r.query
    # … also where the follow-up restates another word of the previous question ("di smt 5" after "… smt 5 …")
    r = _ask("kalo yg pilihan di smt 5?", ("matkul wajib smt 5 apa aja", "Mata kuliah semester 5, wajib (4): …"))
    got = _words(r.query)
    assert {"pilihan", "5"} <= got and "wajib" not in got, r.query


def test_a_two_digit_academic_year_range_is_carried_as_one_year_range():
    r = _ask("tempatnya di mana?", ("wisuda smt ganjil 23/24 kapan ya", ABSTAINED))
    got = _words(r.query)
    assert "2023/2024" in got and not ({"23", "24"} & got), r.query
    # not a range of consecutive years: left as typed
    r = _ask("tempatnya di mana?", ("kelas 3/5 kapan ya", ABSTAINED))
    assert "3/5" in _words(r.query), r.query


# -- what stays as it was ------------------------------------------------------------------------------------------

def test_a_list_followup_that_changes_a_value_keeps_the_list_question():
    r = _ask("kalo yg lantai 5?", ("ruang kelas yg di lantai 4 apa aja", ABSTAINED))
    got = _words(r.query)
    assert {"kelas", "lantai", "5", "apa"} <= got and "4" not in got, r.query


def test_a_new_subject_with_the_same_value_switches_the_topic():
    # the number was in the previous question too: it narrows nothing, the follow-up names a new subject
    r = _ask("kalo matkul smt 2 apa aja?", ("jadwal praktikum kelas B smt 2 hari apa aja", ABSTAINED))
    got = _words(r.query)
    assert {"matkul", "2"} <= got and not ({"jadwal", "praktikum", "hari"} & got), r.query
    # a number of its own still narrows the previous question ("the 3-credit ones?")
    r = _ask("kalo yg 3 sks?", ("matkul pilihan smt 5 apa aja", ABSTAINED))
    assert {"matkul", "pilihan", "3", "sks"} <= _words(r.query), r.query


def test_a_new_subject_before_a_shared_word_switches_the_topic():
    # "kalau X?" whose X names a subject of its own before the word it shares with the previous question: the shared
    # word is part of the new subject ("cuti kuliah" after "biaya kuliah"), not a head whose tail replaces the old one
    r = _ask("kalo mau cuti kuliah gmn caranya?", ("biaya kuliah per semester brp", ABSTAINED))
    got = _words(r.query)
    assert {"cuti", "kuliah"} <= got and not ({"biaya", "semester"} & got), r.query
    # a facet value before the shared word still narrows the previous question
    r = _ask("kalo yg genap di semester 4?", ("jadwal uas ganjil semester 4 kapan", ABSTAINED))
    got = _words(r.query)
    assert {"jadwal", "uas", "genap", "4"} <= got and "ganjil" not in got, r.query


def test_a_new_value_replaces_the_whole_old_value_after_the_shared_word():
    # the old value has two words ("panjat tebing"), the new one one ("catur"): both old words go, the attribute stays
    r = _ask("kalo klub catur?", ("klub panjat tebing kumpulnya kapan", ABSTAINED))
    got = _words(r.query)
    assert {"klub", "catur", "kapan"} <= got and not ({"panjat", "tebing"} & got), r.query


def test_a_value_restated_in_full_replaces_the_shorthand_one():
    r = _ask("kalo yg semester 3?", ("matkul pilihan smt 4 apa aja", ABSTAINED))
    got = _words(r.query)
    assert "3" in got and "4" not in got, r.query


# -- "ada lagi?" / "yang lain?" asks for something other than what the reply named --------------------------------------

def test_an_alternative_followup_names_what_the_reply_gave_to_leave_out():
    r = _ask("ada lagi ga yg belajar robotik?",
             ("klub yg bahas elektronika apa ya", "Klub ROBOTIKA (Robot dan Elektronika) membahas mikrokontroler. [1]"))
    assert r.rewritten and "ROBOTIKA" in r.exclude, r
    r = _ask("ada yang lain?", ("Apa saja klub di kampus?", "Selain Himpunan Mahasiswa (HMX), ada klub KOPI. [1]"))
    assert {"HMX", "KOPI"} <= set(r.exclude), r
    # a follow-up that asks no alternative leaves nothing out; nor does an abstention name anything
    assert _ask("ketuanya siapa?", ("klub yg bahas elektronika apa ya", "Klub ROBOTIKA membahas mikrokontroler.")).exclude == ()
    assert _ask("ada yang lain?", ("Apa saja klub di kampus?", ABSTAINED)).exclude == ()
    # what one asks about (an attribute such as SKS) is no name to leave out
    r = _ask("syarat lainnya apa?", ("syarat magang apa", "Syarat magang: lulus 90 SKS dan IPK 2,75. [1]"))
    assert "SKS" not in r.exclude, r


def test_an_alternative_after_a_follow_up_leaves_out_what_the_chain_was_about():
    # "ada lagi?" two turns after the club was named: the club, not only the adviser the last reply named, is left out
    r = _ask("ada lagi ga klub yg belajar solder?",
             ("klub yg bahas elektronika apa ya", "Klub ROBOTIKA (Robot dan Elektronika) membahas mikrokontroler. [1]"),
             ("pembinanya siapa?", "Dosen pembina: Budi Santoso, M.Kom. [1]"))
    assert r.rewritten and "ROBOTIKA" in r.exclude, r
    # a new question in between starts a new chain: what came before it is not left out
    r = _ask("ada lagi ga klub yg belajar solder?",
             ("klub yg bahas elektronika apa ya", "Klub ROBOTIKA (Robot dan Elektronika) membahas mikrokontroler. [1]"),
             ("kapan batas pengisian krs semester ganjil?", "Pengisian KRS ganjil: 1–12 Agustus. [1]"))
    assert "ROBOTIKA" not in r.exclude, r


def test_a_message_with_nothing_to_ask_does_not_repeat_the_previous_question():
    # "itu aja sih" (that's all) has no word of its own to resolve and asks for nothing more: it is no "again"
    r = _ask("itu aja sih", ("klub yg bahas elektronika apa ya", "Klub ROBOTIKA membahas mikrokontroler. [1]"))
    assert not r.rewritten, r
    # "ada lagi?" / "yang lain?" do ask for more of the same
    for more in ("ada lagi?", "yg lain?", "lainnya?"):
        r = _ask(more, ("klub yg bahas elektronika apa ya", "Klub ROBOTIKA membahas mikrokontroler. [1]"))
        assert r.rewritten and "elektronika" in _words(r.query), (more, r)


def test_opening_hours_are_an_attribute_of_the_previous_subject():
    # "bukanya jam berapa?" asks for the service hours of what was just discussed, not about a new subject "buka"
    for followup in ("bukanya jam berapa ya", "tutupnya jam berapa?", "jam operasionalnya kapan?"):
        r = _ask(followup, ("perpustakaan jurusan di gedung mana?", "Perpustakaan jurusan ada di Gedung C lantai 2. [1]"))
        got = _words(r.query)
        assert r.rewritten and {"perpustakaan", "jurusan"} <= got, (followup, r.query)
