import pytest

from retrieval.facts import FactsTable, build_facts, parse_course_line
from tests.retrieval.conftest import corpus_documents


@pytest.fixture
def facts(tmp_path) -> FactsTable:
    counts = build_facts(corpus_documents(), tmp_path / "facts.sqlite3")
    assert counts == {"lecturer_fields": 13, "lecturers": 3, "courses": 6}
    return FactsTable.load(tmp_path / "facts.sqlite3")


def test_course_line_parser():
    assert parse_course_line("IF-301 – Basis Data – 3 SKS – Semester 5 – Wajib") == {
        "code": "IF-301", "name": "Basis Data", "sks": 3, "semester": 5, "kind": "wajib"}
    assert parse_course_line("IF-301 - Basis Data - 3 SKS - Semester 5 - Pilihan")["kind"] == "pilihan"
    assert parse_course_line("Basis Data adalah mata kuliah penting – semester 5") is None


def test_courses_by_semester_and_sks(facts):
    result = facts.lookup("mata kuliah semester 5 yang 3 SKS")
    assert result.constraints == {"semester": 5, "sks": 3}
    assert [r["code"] for r in result.rows] == ["IF-301", "IF-302"]
    assert "IF-301 Basis Data" in result.text and "Sumber: http://prodi.test/kurikulum/" in result.text
    assert result.doc_ids == ("kurikulum",)


def test_courses_by_kind_code_and_name(facts):
    assert [r["code"] for r in facts.lookup("matkul pilihan semester lima").rows] == ["IF-351"]
    assert facts.lookup("berapa sks IF 410?").rows[0]["sks"] == 3
    by_name = facts.lookup("mata kuliah basis data ada di semester berapa")
    assert [r["code"] for r in by_name.rows] == ["IF-301"]


def test_lecturers_by_field(facts):
    result = facts.lookup("dosen bidang Intelligent System")
    assert result.constraints == {"bidang": "intelligent system"}
    assert {r["name"] for r in result.rows} == {"Prof. Dr. Suhartono, M.Kom.", "Dr. Agus Santoso, M.Cs."}
    assert "http://prodi.test/dosen/agus/" in result.text


def test_lecturer_attribute(facts):
    result = facts.lookup("email Prof. Suhartono")
    assert [(r["field"], r["value"]) for r in result.rows] == [("Email", "suhartono@informatika.example.ac.id")]
    assert result.urls == ("http://prodi.test/dosen/suhartono/",)
    assert "suhartono@informatika.example.ac.id" in result.text


def test_non_facts_questions_return_nothing(facts):
    assert not facts.lookup("kapan pendaftaran mahasiswa baru dibuka")
    # an attribute without a person is ambiguous: the lecturers who have it are offered to ask between, and no
    # page is boosted in retrieval
    ambiguous = facts.lookup("apa email")
    assert ambiguous.constraints["ask_person"] == ["Email"] and not ambiguous.doc_ids
    empty = facts.lookup("mata kuliah semester 8")
    assert empty.constraints == {"semester": 8} and not empty.rows and "Tidak ada mata kuliah" in empty.text


# How students name an attribute: an inflected form of the field's word ("ruangannya", "emailnya") or a clipped
# compound of a two-word field name ("jabfung" = Jabatan Fungsional, "matkul" = Mata Kuliah). The class, not
# one question: every field name of the corpus is tried in both shapes.
@pytest.mark.parametrize(("question", "field"), [
    ("jabfung pak suhartono apa", "Jabatan Fungsional"),
    ("bu fitri jabfungnya apa ya", "Jabatan Fungsional"),
    ("pak agus santoso emailnya apa", "Email"),
])
def test_lecturer_attribute_as_students_name_it(facts, question, field):
    result = facts.lookup(question)
    assert result.constraints.get("field") == [field], result.constraints
    assert {r["field"] for r in result.rows} == {field}


def test_inflected_field_names(tmp_path):
    from storage.models import Document

    text = ("Nama: Dr. Rahmat Hidayat, M.T.\nRuang: Gedung B.3.10\nPendidikan: S3 Ilmu Komputer, Universitas Indonesia\n"
            "Mata Kuliah: IF-201 Basis Data")
    doc = Document(doc_id="rahmat", url="http://prodi.test/dosen/rahmat/", title="Dr. Rahmat Hidayat, M.T.", text=text,
                   content_hash="x", kind="lecturer", urls=("http://prodi.test/dosen/rahmat/",))
    build_facts([doc], tmp_path / "f.sqlite3")
    table = FactsTable.load(tmp_path / "f.sqlite3")
    assert [r["value"] for r in table.lookup("ruangan pak rahmat dimana").rows] == ["Gedung B.3.10"]
    assert [r["value"] for r in table.lookup("pendidikannya pak rahmat hidayat apa").rows] == [
        "S3 Ilmu Komputer, Universitas Indonesia"]
    assert [r["value"] for r in table.lookup("pak rahmat ngajar matkul apa").rows] == ["IF-201 Basis Data"]
    # a word of a field's value names that field ("S3 nya dimana" → Pendidikan); a bare name names none
    assert [r["field"] for r in table.lookup("pak rahmat s3 nya dimana").rows] == ["Pendidikan"]
    assert table.lookup("pak rahmat hidayat").constraints == {"name": ["Dr. Rahmat Hidayat, M.T."]}
    # a clipped compound needs both words of the field: "jabatan" alone is not "jabfung"
    assert table.lookup("jabfung pak rahmat").constraints.get("field") is None


def test_a_short_word_is_not_a_clipped_field_name(facts):
    # "bida" (4 letters) is shorter than any compound; a word that merely starts like a field is no field
    assert facts.lookup("pak agus bida").constraints.get("field") is None


# --- who teaches a course: the lecturers whose course-listing field names it (made-up lecturers and courses) ---
def _teaching_table(tmp_path) -> FactsTable:
    from storage.models import Document

    def lecturer(slug: str, name: str, lines: str) -> Document:
        return Document(doc_id=slug, url=f"http://kampus.test/staf/{slug}/", title=name, text=f"Nama: {name}\n{lines}",
                        content_hash=slug, kind="lecturer", urls=(f"http://kampus.test/staf/{slug}/",))

    curriculum = Document(
        doc_id="kur", url="http://kampus.test/kur/", title="Kurikulum", content_hash="k", kind="curriculum",
        urls=("http://kampus.test/kur/",),
        text="\n".join([
            "TX-210 – Pemrograman Fungsional – 3 SKS – Semester 4 – Wajib",
            "TX-211 – Praktikum Pemrograman Fungsional – 1 SKS – Semester 4 – Wajib",
            "TX-320 – Kriptografi Terapan – 3 SKS – Semester 6 – Pilihan",
            "TX-330 – Komputasi Kuantum – 3 SKS – Semester 6 – Pilihan",
        ]))
    docs = [
        curriculum,
        lecturer("wiratmoko", "Dr. Gilang Wiratmoko, M.Kom.",
                 "Bidang Keahlian: Komputasi Kuantum\nMata Kuliah: TX-210 Pemrograman Fungsional; TX-320 Kriptografi Terapan"),
        lecturer("larasati", "Kinanti Larasati, M.T.",
                 "Email: kinanti@kampus.test\nMata Kuliah: TX-211 Praktikum Pemrograman Fungsional; TX-320 Kriptografi Terapan"),
    ]
    build_facts(docs, tmp_path / "t.sqlite3")
    return FactsTable.load(tmp_path / "t.sqlite3")


def test_a_first_name_that_is_a_word_of_the_language_names_no_one_alone(tmp_path):
    """ "laptop yg bagus" is a good laptop, not Dr. Bagus: a name token that the language uses as a word (the
    bundled lexicon's formal forms) names the lecturer only beside another of his name tokens or an honorific."""
    from storage.models import Document

    text = "Nama: Dr. Bagus Setiawan Nugroho, M.T.\nRuang: Lab Jaringan B.3.06\nEmail: bagus.nugroho@ti.test"
    doc = Document(doc_id="bagus", url="http://prodi.test/dosen/bagus/", title="Dr. Bagus Setiawan Nugroho, M.T.",
                   text=text, content_hash="x", kind="lecturer", urls=("http://prodi.test/dosen/bagus/",))
    build_facts([doc], tmp_path / "f.sqlite3")
    table = FactsTable.load(tmp_path / "f.sqlite3")
    assert "name" not in table.lookup("rekomendasi laptop buat kuliah yg bagus apa").constraints
    for question in ("ruangan pak bagus dimana", "email bagus setiawan apa", "ruangan nugroho dimana"):
        assert table.lookup(question).constraints.get("name") == ["Dr. Bagus Setiawan Nugroho, M.T."], question


def test_who_teaches_a_course_by_name(tmp_path):
    table = _teaching_table(tmp_path)
    result = table.lookup("siapa dosen yang mengajar Pemrograman Fungsional")
    assert result.constraints == {"teaches": "Pemrograman Fungsional"}
    # the practical course with the longer name is another course
    assert [r["name"] for r in result.rows] == ["Dr. Gilang Wiratmoko, M.Kom."]
    assert result.rows[0]["field"] == "Mata Kuliah" and result.rows[0]["table"] == "lecturers"
    assert result.text.startswith("Dosen pengampu Pemrograman Fungsional: Dr. Gilang Wiratmoko, M.Kom.")
    assert "Sumber: http://kampus.test/staf/wiratmoko/" in result.text
    assert result.doc_ids == ("wiratmoko",)
    practical = table.lookup("dosen yang mengampu praktikum pemrograman fungsional siapa")
    assert [r["name"] for r in practical.rows] == ["Kinanti Larasati, M.T."]


def test_who_teaches_a_course_by_code(tmp_path):
    result = _teaching_table(tmp_path).lookup("siapa pengampu TX-211?")
    assert result.constraints == {"teaches": "Praktikum Pemrograman Fungsional"}
    assert [r["name"] for r in result.rows] == ["Kinanti Larasati, M.T."]


@pytest.mark.parametrize("question", [
    "dosen yang mengajar pemrograman fungsional siapa",          # "yg ngajar", normalised
    "dosen yang ngajar pemrograman fungsional siapa",            # the expanded form keeps "ngajar"
    "pengampu matkul mata kuliah pemrograman fungsional siapa",  # "matkul" with "mata kuliah" added
    "pemrograman fungsional diajar siapa",
])
def test_who_teaches_in_colloquial_phrasing(tmp_path, question):
    result = _teaching_table(tmp_path).lookup(question)
    assert result.constraints == {"teaches": "Pemrograman Fungsional"}, question
    assert [r["name"] for r in result.rows] == ["Dr. Gilang Wiratmoko, M.Kom."]


def test_two_lecturers_share_a_course(tmp_path):
    result = _teaching_table(tmp_path).lookup("siapa dosen pengampu kriptografi terapan")
    assert [r["name"] for r in result.rows] == ["Dr. Gilang Wiratmoko, M.Kom.", "Kinanti Larasati, M.T."]
    assert "Dr. Gilang Wiratmoko, M.Kom.; Kinanti Larasati, M.T." in result.text
    assert result.urls == ("http://kampus.test/staf/wiratmoko/", "http://kampus.test/staf/larasati/")


def test_who_teaches_without_an_answer_is_empty(tmp_path):
    table = _teaching_table(tmp_path)
    # no lecturer lists the course (a "Bidang Keahlian" naming it is no teaching): retrieval answers, no "tidak ada"
    none = table.lookup("siapa dosen yang mengajar komputasi kuantum")
    assert not none and not none.constraints and not none.text
    # a teaching verb without a known course
    assert not table.lookup("siapa dosen yang mengajar mata kuliah sejarah seni").rows
    assert not table.lookup("dosen yang mengajar siapa saja").constraints


def test_course_and_lecturer_questions_without_teaching_are_unchanged(tmp_path):
    table = _teaching_table(tmp_path)
    assert table.lookup("pemrograman fungsional itu belajar apa").constraints == {}
    assert table.lookup("mata kuliah pemrograman fungsional berapa sks").constraints == {"name": "Pemrograman Fungsional"}
    assert [r["code"] for r in table.lookup("TX-320 berapa SKS").rows] == ["TX-320"]
    assert [r["value"] for r in table.lookup("email bu kinanti").rows] == ["kinanti@kampus.test"]
    assert [r["name"] for r in table.lookup("siapa dosen bidang komputasi kuantum").rows] == [
        "Dr. Gilang Wiratmoko, M.Kom."]


@pytest.mark.parametrize("question", [
    "email dosen yang mengajar kriptografi terapan apa",
    "emailnya dosen pengampu kriptografi terapan",
    "email dosen yg ngajar kriptografi terapan",
])
def test_an_attribute_of_the_lecturers_who_teach_a_course(tmp_path, question):
    """ "email dosen yang mengajar X" asks for the teachers' email, not for their names alone; a teacher whose page
    has no such field is said to have none listed."""
    from generation.facts_render import facts_usable, render_facts

    result = _teaching_table(tmp_path).lookup(question)
    assert result.constraints == {"teaches": "Kriptografi Terapan", "field": ["Email"]}, question
    assert [(r["name"], r["field"]) for r in result.rows] == [
        ("Dr. Gilang Wiratmoko, M.Kom.", "Mata Kuliah"), ("Kinanti Larasati, M.T.", "Mata Kuliah"),
        ("Kinanti Larasati, M.T.", "Email")]
    assert facts_usable(result.constraints, result.rows, question)
    assert render_facts(result.constraints, list(result.rows)) == (
        "Dosen pengampu Kriptografi Terapan (2): Dr. Gilang Wiratmoko, M.Kom.; Kinanti Larasati, M.T.\n"
        "Email Dr. Gilang Wiratmoko, M.Kom. tidak tercantum di halamannya.\n"
        "Email Kinanti Larasati, M.T.: kinanti@kampus.test.")
    assert "Email Kinanti Larasati, M.T.: kinanti@kampus.test" in result.text


def test_naming_the_course_field_asks_for_no_attribute(tmp_path):
    # "mata kuliah" names the course-listing field and "nama" the name: neither is an attribute asked for
    table = _teaching_table(tmp_path)
    for question in ("siapa dosen pengampu mata kuliah kriptografi terapan", "nama dosen yang mengajar kriptografi terapan"):
        assert table.lookup(question).constraints == {"teaches": "Kriptografi Terapan"}, question


def test_who_teaches_rendering_and_usability(tmp_path):
    from generation.facts_render import facts_usable, render_facts

    result = _teaching_table(tmp_path).lookup("siapa dosen pengampu kriptografi terapan")
    assert facts_usable(result.constraints, result.rows, "siapa dosen pengampu kriptografi terapan")
    assert render_facts(result.constraints, list(result.rows)) == (
        "Dosen pengampu Kriptografi Terapan (2): Dr. Gilang Wiratmoko, M.Kom.; Kinanti Larasati, M.T.")


# A field guessed from a value word ("pak X S2 nya dimana" → the field whose value lists S2) stands only when the
# value accounts for every such word. A question that names the person by one of their values and asks for
# something the table does not hold ("nomor WhatsApp pribadi" of the "guru besar", or a follow-up rewritten with
# the previous subject, "ketua prodi X") gets no facts answer: the text pipeline takes it.
@pytest.mark.parametrize("question", [
    "berapa nomor whatsapp pribadi guru besar suhartono",
    "alamat rumah prof suhartono yang guru besar dimana",
    "bu fitri handayani yang keamanan siber itu hobinya apa",
])
def test_no_field_is_guessed_when_the_question_asks_for_something_else(facts, question):
    result = facts.lookup(question)
    assert "field" not in result.constraints, result.constraints


@pytest.mark.parametrize(("question", "field"), [
    ("prof suhartono data mining?", "Bidang Keahlian"),
    ("pak suhartono guru besar?", "Jabatan Fungsional"),
])
def test_a_field_is_still_guessed_when_the_value_accounts_for_the_question(facts, question, field):
    assert facts.lookup(question).constraints.get("field") == [field]


def test_of_the_fields_a_value_word_points_at_the_one_whose_value_holds_most_of_the_question(tmp_path):
    """ "kepala lab Rina" meets "Kepala" in both "Jabatan Fungsional: Lektor Kepala" and "Jabatan: Kepala
    Laboratorium X": the one whose value also holds "laboratorium" is what is asked."""
    from storage.models import Document

    doc = Document(doc_id="rina", url="http://kampus.test/staf/rina/", title="Dr. Rina Kartika, M.T.", kind="lecturer",
                   text="Nama: Dr. Rina Kartika, M.T.\nJabatan: Kepala Laboratorium Intelligent System\n"
                        "Jabatan Fungsional: Lektor Kepala\nEmail: rina@kampus.test",
                   content_hash="rina", urls=("http://kampus.test/staf/rina/",))
    build_facts([doc], tmp_path / "v.sqlite3")
    table = FactsTable.load(tmp_path / "v.sqlite3")
    assert table.lookup("kepala lab laboratorium Rina Kartika?").constraints.get("field") == ["Jabatan"]
    # a word both hold ("lektor" is a lecturer word, not a value word) points at both
    assert table.lookup("bu rina lektor kepala?").constraints.get("field") == ["Jabatan", "Jabatan Fungsional"]


def _role_table(tmp_path) -> FactsTable:
    from storage.models import Document

    def lecturer(slug: str, name: str, lines: str) -> Document:
        return Document(doc_id=slug, url=f"http://kampus.test/staf/{slug}/", title=name, text=f"Nama: {name}\n{lines}",
                        content_hash=slug, kind="lecturer", urls=(f"http://kampus.test/staf/{slug}/",))

    docs = [
        lecturer("wiratmoko", "Dr. Gilang Wiratmoko, M.Kom.",
                 "Jabatan: Ketua Program Studi\nJabatan Fungsional: Lektor Kepala\nEmail: gilang@kampus.test"),
        lecturer("larasati", "Kinanti Larasati, M.T.",
                 "Jabatan: Sekretaris Program Studi\nJabatan Fungsional: Lektor\nEmail: kinanti@kampus.test"),
        lecturer("pratama", "Yoga Pratama, M.Cs.", "Jabatan: Kepala Laboratorium Jaringan\nEmail: yoga@kampus.test"),
    ]
    build_facts(docs, tmp_path / "r.sqlite3")
    return FactsTable.load(tmp_path / "r.sqlite3")


@pytest.mark.parametrize(("question", "name"), [
    ("siapa ketua program studi", "Dr. Gilang Wiratmoko, M.Kom."),
    ("kaprodi ketua program studi siapa ya", "Dr. Gilang Wiratmoko, M.Kom."),  # as the normaliser expands "kaprodi"
    ("sekretaris program studi siapa", "Kinanti Larasati, M.T."),
    ("siapa kepala laboratorium jaringan", "Yoga Pratama, M.Cs."),
])
def test_who_holds_a_role_is_the_lecturer_whose_field_value_is_that_role(tmp_path, question, name):
    from generation.facts_render import facts_usable, render_facts

    result = _role_table(tmp_path).lookup(question)
    assert [r["name"] for r in result.rows] == [name]
    assert facts_usable(result.constraints, result.rows, question)
    role = result.rows[0]["value"]
    # a sentence that names the role and the person, citing their profile (the first source)
    assert render_facts(result.constraints, list(result.rows)) == f"{role}: {name} [1]"
    assert result.urls == (result.rows[0]["url"],)


def test_a_role_names_the_person_whose_field_is_asked(tmp_path):
    result = _role_table(tmp_path).lookup("email ketua program studi")
    assert [(r["name"], r["value"]) for r in result.rows] == [("Dr. Gilang Wiratmoko, M.Kom.", "gilang@kampus.test")]


@pytest.mark.parametrize("question", [
    "siapa dosen lektor",  # a rank many hold is not a role question for one person
    "siapa ketua himpunan mahasiswa",  # a role no lecturer's field holds
    "program studi apa saja yang ada",  # no role word at all
])
def test_no_role_answer_without_a_role_the_table_holds(tmp_path, question):
    assert not _role_table(tmp_path).lookup(question).rows


def _coordinators(tmp_path) -> FactsTable:
    from storage.models import Document

    def lecturer(slug: str, name: str, lines: str) -> Document:
        return Document(doc_id=slug, url=f"http://kampus.test/staf/{slug}/", title=name, text=f"Nama: {name}\n{lines}",
                        content_hash=slug, kind="lecturer", urls=(f"http://kampus.test/staf/{slug}/",))

    docs = [
        lecturer("yaqin", "Dr. Ainul Yaqin, M.Kom.", "Jabatan: Koordinator Skripsi\nEmail: yaqin@kampus.test"),
        lecturer("ibrahim", "Yusuf Ibrahim, M.Kom.", "Jabatan: Koordinator Kerja Praktik\nEmail: yusuf@kampus.test"),
        lecturer("wira", "Gilang Wira, M.T.", "Jabatan: Ketua Program Studi\nEmail: gilang@kampus.test"),
        lecturer("sari", "Sari Dewi, M.T.", "Jabatan: Ketua Laboratorium Jaringan\nEmail: sari@kampus.test"),
    ]
    build_facts(docs, tmp_path / "k.sqlite3")
    return FactsTable.load(tmp_path / "k.sqlite3")


def test_a_role_word_several_roles_share_asks_back_between_their_holders(tmp_path):
    from generation.facts_render import facts_usable

    table = _coordinators(tmp_path)
    result = table.lookup("mau tanya email koordinator dong")
    assert result.constraints.get("ask_role") == "koordinator"
    assert [(r["name"], r["value"]) for r in result.rows] == [
        ("Dr. Ainul Yaqin, M.Kom.", "Koordinator Skripsi"), ("Yusuf Ibrahim, M.Kom.", "Koordinator Kerja Praktik")]
    assert facts_usable(result.constraints, result.rows, "mau tanya email koordinator dong")
    # the role named in full is no choice: the person
    # asking who holds a role the table does not name ("ketua himpunan") is no ask-back between lecturers
    assert not table.lookup("ketua himpunan sekarang siapa").constraints.get("ask_role")
    exact = table.lookup("email koordinator skripsi")
    assert [(r["name"], r["value"]) for r in exact.rows] == [("Dr. Ainul Yaqin, M.Kom.", "yaqin@kampus.test")]


def test_two_roles_named_in_one_question_name_both_holders(tmp_path):
    from generation.facts_render import render_facts

    result = _role_table(tmp_path).lookup("ketua program studi sama sekretaris program studi siapa aja")
    assert [(r["name"], r["value"]) for r in result.rows] == [
        ("Dr. Gilang Wiratmoko, M.Kom.", "Ketua Program Studi"), ("Kinanti Larasati, M.T.", "Sekretaris Program Studi")]
    assert render_facts(result.constraints, list(result.rows)) == (
        "Ketua Program Studi: Dr. Gilang Wiratmoko, M.Kom. [1]; Sekretaris Program Studi: Kinanti Larasati, M.T. [2]")


def test_an_empty_lookup_names_the_rule_that_emptied_it(facts):
    # a course name alone is a topic of other pages too ("berapa sks basis data?" may be the thesis guide's)
    result = facts.lookup("berapa sks basis data?")
    assert not result and result.rule == "only_name"
    assert facts.lookup("yang wajib apa saja").rule == "only_kind"
    assert facts.lookup("kapan pendaftaran mahasiswa baru dibuka").rule == "no_constraints"
    assert facts.lookup("mata kuliah semester 5 yang 3 SKS").rule == ""  # rows found: no rule emptied it


@pytest.mark.parametrize("question", ["sinta id bu", "nip bapak", "email dosen", "email dosen apa ya", "sinta id"])
def test_a_field_asked_of_no_one_in_particular_asks_which_lecturer(tmp_path, question):
    """A lecturer field ("Email", "Sinta ID") asked with nothing but a person word ("bu", "dosen") or nothing at all
    names no lecturer: the lookup offers every lecturer who has the field to ask between (the rows), says whether a
    person was meant, and boosts no page in retrieval (no doc_ids)."""
    from storage.models import Document

    docs = [Document(doc_id=slug, url=f"http://kampus.test/staf/{slug}/", title=name, kind="lecturer",
                     text=f"Nama: {name}\nNIP: {nip}\nSinta ID: {sinta}\nPendidikan: S2 Informatika\nJabatan: Dosen Tetap\n"
                          f"Jabatan Fungsional: Lektor\nEmail: {slug}@kampus.test",
                     content_hash=slug, urls=(f"http://kampus.test/staf/{slug}/",))
            for slug, name, nip, sinta in [("yaqin", "Dr. Ainul Yaqin, M.Kom.", "1981", "601"),
                                           ("sari", "Sari Dewi, M.T.", "1985", "602"),
                                           ("wira", "Gilang Wira, M.T.", "1990", "603"),
                                           ("rina", "Rina Kartika, M.T.", "1992", "604")]]
    build_facts(docs, tmp_path / "f.sqlite3")
    table = FactsTable.load(tmp_path / "f.sqlite3")
    result = table.lookup(question)
    asked = result.constraints.get("ask_person")
    assert asked and len(asked) == 1 and asked[0].lower() in question
    assert [r["name"] for r in result.rows] == ["Dr. Ainul Yaqin, M.Kom.", "Sari Dewi, M.T.", "Gilang Wira, M.T.",
                                                "Rina Kartika, M.T."]
    assert not result.doc_ids and not result.text
    assert result.constraints.get("person") is (question != "sinta id")
    # a word the field does not account for is another question; a name is the person's field as before
    assert not table.lookup("email beasiswa").constraints.get("ask_person")
    assert not table.lookup("biaya pendidikan").constraints
    # the most specific of the fields a question names
    assert table.lookup("jabatan fungsional dosen").constraints.get("ask_person") == ["Jabatan Fungsional"]
    named = table.lookup("sinta id bu rina")
    assert [(r["name"], r["value"]) for r in named.rows] == [("Rina Kartika, M.T.", "604")]
