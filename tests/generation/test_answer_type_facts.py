"""Answer-type checks, list-question detection, and the facts-table rendering/usability rules."""

from __future__ import annotations

import pytest

from generation.answer_type import expected_type, is_list_question, type_ok
from generation.facts_render import facts_usable, render_facts


@pytest.mark.parametrize(
    ("question", "sentence", "ok"),
    [
        ("Berapa biaya tinggal di asrama per bulan?", "Mahasiswa baru wajib tinggal di asrama selama satu tahun.", False),
        ("Berapa biaya UKT?", "UKT golongan 3 sebesar Rp 2.500.000 per semester.", True),
        ("Berapa lama kerja praktik?", "Kerja praktik dilaksanakan minimal 1 bulan.", True),
        ("Berapa lama kerja praktik?", "Kerja praktik dilaksanakan di perusahaan mitra.", False),
        ("Kapan UAS genap?", "UAS genap: 15–26 Juni 2026", True),
        ("Kapan UAS genap?", "UAS dilaksanakan di gedung kuliah bersama.", False),
        ("Siapa ketua prodi?", "Ketua Program Studi adalah Supriyono, M.Kom.", True),
        ("Siapa ketua prodi?", "ketua program studi dipilih setiap empat tahun.", False),
        ("Siapa yang memainkan wayang?", "Wayang dimainkan oleh seorang dalang.", True),
        ("Apa visi prodi?", "Menjadi prodi unggul.", True),
        # "hari apa" / "bulan apa" ask for a time like "kapan"
        ("komunitas robotika kumpul hari apa", "Jadwal kegiatan: setiap Rabu pukul 15.00", True),
        ("komunitas robotika kumpul hari apa", "Komunitas ini mengirim tim ke kontes robot nasional.", False),
        ("beasiswa dibuka bulan apa", "Pendaftaran dibuka pada Maret setiap tahun.", True),
        # a bare number is no time; a year, a clock time, a date, an amount of time or an ordinal period is
        ("Kapan sidang skripsi?", "Sidang skripsi mensyaratkan lulus 138 SKS.", False),
        ("Kapan batas bayar?", "Hubungi bagian keuangan di (0321) 774411.", False),
        ("Kapan kantor buka?", "Layanan buka 08.00–15.30.", True),
        ("Kapan menara itu dibangun?", "Menara itu dibangun pada 988 oleh raja setempat.", True),
        ("Kapan ambil magang?", "Magang diambil di semester 6.", True),
        ("Kapan wisuda?", "Wisuda berlangsung 3 hari.", True),
        # a name is a titled name, a capitalised word that is no Indonesian word, or "oleh …"
        ("Siapa ketua himpunan?", "Himpunan Mahasiswa Teknik Kimia mengadakan Musyawarah Besar.", False),
        ("Siapa juara lomba?", "Lomba Periode Agustus", False),
        ("Siapa juara lomba?", "Juara pertama diraih Wiratmoko dari kelas B.", True),
        ("Siapa gitarisnya?", "Gitarisnya kini McAllister.", True),
        # an acronym in capitals names an organisation, not a person
        ("Siapa ketua himpunan?", "Pengurus HMJ TI periode 2019 menggelar rapat kerja.", False),
        ("Siapa pembina komunitas?", "Komunitas GDSC mengadakan pelatihan setiap semester.", False),
        ("Siapa ketua himpunan?", "Ketua HMJ TI periode ini adalah Wiratmoko.", True),
    ],
)
def test_answer_type(question, sentence, ok):
    assert type_ok(expected_type(question), sentence) is ok


def test_list_questions():
    assert is_list_question("Apa saja komunitas mahasiswa?")
    assert is_list_question("Sebutkan laboratorium yang ada")
    assert not is_list_question("Siapa ketua prodi?")


COURSES = [
    {"table": "courses", "code": "IF-301", "name": "Basis Data", "sks": 3, "semester": 3, "kind": "wajib", "url": "u"},
    {"table": "courses", "code": "IF-302", "name": "Struktur Data", "sks": 3, "semester": 3, "kind": "wajib", "url": "u"},
]


def test_facts_rendering_is_compact():
    text = render_facts({"semester": 3, "sks": 3}, COURSES)
    assert text == "Mata kuliah semester 3, 3 SKS (2): IF-301 Basis Data; IF-302 Struktur Data."
    one = render_facts({"name": "Basis Data"}, COURSES[:1])
    assert "IF-301" in one and "3 SKS" in one and "semester 3" in one
    lec = [{"table": "lecturers", "name": "Dr. A", "field": "Email", "value": "a@x.id", "url": "u"}]
    assert render_facts({"name": ["Dr. A"], "field": ["Email"]}, lec) == "Email Dr. A: a@x.id."


def test_facts_usability():
    assert facts_usable({"semester": 3}, COURSES)
    assert not facts_usable({"semester": 3}, [])
    assert facts_usable({"name": "Basis Data"}, COURSES[:1], "Berapa SKS mata kuliah Basis Data?")
    assert not facts_usable({"name": "Skripsi"}, COURSES[:1], "Apa syarat mengambil skripsi?")
    lec = [{"table": "lecturers", "name": "Prof. X", "field": "NIP", "value": "1", "url": "u"}]
    assert not facts_usable({"name": ["Prof. X"]}, lec, "Berapa nomor HP pribadi Prof. X?")


@pytest.mark.parametrize(
    ("question", "unit"),
    [("magang minimal berapa jam kerja", "jam"), ("berapa hari masa sanggah", "hari"), ("kuota berapa orang", "orang"),
     ("berapa persen lulusan bekerja", "persen"), ("Berapa SKS bobot skripsi?", "sks"), ("jam berapa kantor buka", None),
     ("berapa tahun masa studi", None), ("berapa biaya wisuda", None), ("siapa ketua panitia", None),
     ("kp nya berapa lama sih", "lama"), ("Berapa lama masa studi maksimal?", "lama")],
)
def test_the_unit_a_berapa_question_names(question, unit):
    from generation.answer_type import expected_unit

    assert expected_unit(question) == unit


@pytest.mark.parametrize(
    ("unit", "sentence", "ok"),
    [("jam", "Magang wajib ditempuh minimal 200 jam kerja di mitra.", True),
     ("jam", "Magang dapat diambil setelah lulus 90 SKS.", False),
     ("hari", "Masa sanggah berlangsung tiga hari kerja.", True),
     ("orang", "Sebanyak 31 peserta dinyatakan lulus ujian.", True),
     ("orang", "Pelatihan berlangsung selama 3 hari.", False),
     ("persen", "Sebanyak 75% lulusan bekerja dalam enam bulan.", True),
     ("persen", "Sebanyak 75 persen lulusan bekerja.", True),
     ("sks", "Skripsi berbobot 6 SKS.", True),
     # "berapa lama" wants a duration: an amount of any time unit, or a span of years or dates
     ("lama", "Mahasiswa bekerja di instansi minimal 1 bulan (160 jam kerja).", True),
     ("lama", "Masa studi paling lama tujuh tahun.", True),
     ("lama", "Kerja Praktik adalah mata kuliah wajib dengan bobot 3 SKS.", False),
     ("lama", "Skripsi dapat diambil setelah lulus 120 SKS.", False),
     ("lama", "Dinasti Ming (1368 - 1644) didirikan oleh pemberontakan petani.", True),
     ("lama", "Pertempuran berlangsung dari 11 Oktober hingga 12 Oktober 1942.", True),
     ("lama", "Ia dipenjara sejak tahun 1669 sampai meninggal pada tahun 1703.", True),
     ("lama", "Kerajaan ini berdiri pada tahun 1293.", False)],
)
def test_a_sentence_carries_the_named_unit(unit, sentence, ok):
    from generation.answer_type import unit_ok

    assert unit_ok(unit, sentence) is ok


def test_a_reply_ending_in_a_title_gets_no_second_full_stop():
    rows = [{"table": "lecturers", "name": n, "field": "Bidang Keahlian", "value": "Data Science", "url": "u"}
            for n in ("Dr. Wulan Sari, M.Kom.", "Bayu Aji, M.T.")]
    assert render_facts({"bidang": "data science"}, rows) == (
        "Dosen bidang Data Science (2): Dr. Wulan Sari, M.Kom.; Bayu Aji, M.T.")
    lec = [{"table": "lecturers", "name": "Bayu Aji, M.T.", "field": "Pendidikan", "value": "S2 ITB.", "url": "u"}]
    assert render_facts({"name": ["Bayu Aji, M.T."], "field": ["Pendidikan"]}, lec) == "Pendidikan Bayu Aji, M.T.: S2 ITB."


@pytest.mark.parametrize("question", ["jadwal kuliah semester 3 hari senin apa saja", "mata kuliah semester 3 di ruang mana",
                                      "kapan kuliah semester 3 dimulai", "kuliah semester 3 jam berapa"])
def test_the_course_table_does_not_answer_when_or_where(question):
    """The course table knows codes, names, SKS, semesters and kinds: a question about a schedule, a day, an hour
    or a room goes to the pages instead."""
    assert not facts_usable({"semester": 3}, COURSES, question)
    assert facts_usable({"semester": 3}, COURSES, "mata kuliah semester 3 apa saja")
    assert facts_usable({"semester": 3}, COURSES, "mata kuliah semester 3 mana saja yang wajib")


@pytest.mark.parametrize(("question", "is_list"), [
    ("beasiswa apa aja yang ada", True), ("sebutkan dosen bidang jaringan", True), ("daftar dosen informatika", True),
    ("daftarnya kapan ya", False), ("daftar kapan", False), ("cara daftar beasiswa gimana", False),
    ("kapankah Tembok Raksasa Tiongkok masuk ke daftar keajaiban dunia?", False), ("gmn cara daftar", False), ("daftar ulang sampai tanggal berapa", False),
])
def test_daftar_asks_for_a_list_only_as_a_noun(question, is_list):
    # "daftar" is also the verb "register": with a question word for one answer (kapan, berapa, cara) it asks
    # when or how to register, not for a list
    from generation.answer_type import is_list_question

    assert is_list_question(question) is is_list
