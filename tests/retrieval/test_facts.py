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
    assert not facts.lookup("apa email")  # an attribute without a person is ambiguous
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
