"""Replies lead with the answer, never with a heading, and say both when two pages disagree by date."""

from __future__ import annotations

from generation.compose import answer_label, compose_answer, disagree_by_year, newest_first
from generation.stages.evidence import is_heading as _is_heading
from generation.support import EvidenceSentence


def _s(text: str, url: str = "http://x/a/", rank: int = 0) -> EvidenceSentence:
    return EvidenceSentence(text, rank, f"{url}#0", url, "Judul", 0)


def test_label_is_the_question_without_question_words_and_fillers() -> None:
    assert answer_label("Apa gelar lulusan Teknik Informatika?") == "Gelar lulusan Teknik Informatika"
    assert answer_label("Siapa?") == ""
    assert answer_label("apa saja syarat yang harus dipenuhi untuk mendaftar beasiswa prestasi akademik di sini?") == ""


def test_the_span_leads_under_the_question_topic_then_the_cited_sentence() -> None:
    sentence = _s("Lulusan Program Studi Teknik Informatika memperoleh gelar Sarjana Komputer (S.Kom.).")
    text, sources = compose_answer("S.Kom.", [sentence], question="Apa gelar lulusan Teknik Informatika?")
    first, second = text.split("\n")
    assert first == "Gelar lulusan Teknik Informatika: S.Kom."
    assert second.endswith("[1]") and "Sarjana Komputer" in second
    assert sources[0].url == "http://x/a/"


def test_a_span_that_is_the_whole_sentence_is_not_repeated() -> None:
    sentence = _s("Rabu pukul 15.30 WIB.")
    text, _ = compose_answer("Rabu pukul 15.30 WIB", [sentence], question="Kapan Fun Java berkumpul?")
    assert text == "Rabu pukul 15.30 WIB. [1]"


def test_headings_are_recognised_and_sentences_are_not() -> None:
    assert _is_heading("Sambutan Ketua Program Studi", "", "")
    assert _is_heading("Visi dan Misi", "Visi dan Misi", "Profil")
    assert not _is_heading("Dr. Muhammad Ainul Yaqin, M.Kom.", "", "")
    assert not _is_heading("Telepon: (0341) 558933", "", "")
    assert not _is_heading("Mahasiswa wajib mengisi KRS setiap semester.", "", "")


def test_pages_that_disagree_by_date_put_the_newer_first_and_say_both() -> None:
    old = _s("Program studi terakreditasi A oleh BAN-PT pada tahun 2019.", "http://x/berita/")
    new = _s("Program studi terakreditasi Unggul oleh LAM INFOKOM pada tahun 2023.", "http://x/akreditasi/", 1)
    assert disagree_by_year(old, new)
    text, sources = compose_answer(None, newest_first([old, new]))
    assert text.index("2023") < text.index("2019") and "lebih lama" in text
    assert [s.url for s in sources] == ["http://x/akreditasi/", "http://x/berita/"]
    # different facts that merely carry years are not a disagreement
    other = _s("Douwes Dekker lahir di Pasuruan pada 1879.", "http://x/tokoh/")
    assert not disagree_by_year(old, other)


def test_a_lead_that_is_part_of_a_date_becomes_the_whole_date() -> None:
    """The model often copies only the year (or the day) of a date; the lead is then the date the sentence gives."""
    from generation.compose import whole_date

    sentence = "Seminar nasional diadakan pada 12 Maret 2025 di aula utama."
    assert whole_date("2025", sentence) == "12 Maret 2025"
    assert whole_date("Maret 2025", sentence) == "12 Maret 2025"
    assert whole_date("12 Maret", sentence) == "12 Maret 2025"
    assert whole_date("11–22 Agustus", "Pengisian KRS: 11–22 Agustus 2025.") == "11–22 Agustus 2025"
    assert whole_date("Senin, 5 Mei 2025", "Rapat: Senin, 5 Mei 2025.") == "Senin, 5 Mei 2025"


def test_a_lead_that_is_no_part_of_one_date_stays() -> None:
    from generation.compose import whole_date

    assert whole_date("144 SKS", "Lulus dengan total 144 SKS pada 2024.") == "144 SKS"
    assert whole_date("2024", "Akreditasi 2019 diperbarui 1 Juli 2024, berlaku sampai 2029.") == "1 Juli 2024"
    # the year sits in two dates: which one was meant is unknown, the lead stays
    assert whole_date("2024", "Dibuka 1 Mei 2024 dan ditutup 30 Juni 2024.") == "2024"
    assert whole_date("2030", "Visi: unggul pada tahun 2030.") == "2030"
    assert whole_date("2", "Ujian pada 12 Mei 2024.") == "2"  # a digit inside another number is no part of it


# A list answer names its items: a page's "Name: description" lines (a community and what it does, a graduate
# profile and its work) show as their names, a table row ("Beasiswa: KIP Kuliah; Penyelenggara: …") as its first
# value, so every item fits; prose lines ("Telah lulus minimal 100 SKS.") stay whole.
def test_a_list_answer_names_its_items() -> None:
    from generation.compose import list_item

    lines = [_s("Mahasiswa dapat bergabung dengan komunitas berikut."),
             _s("Komunitas Fun Java: pemrograman berorientasi objek dengan bahasa Java"),
             _s("Google Developer Student Club (GDSC) UIN Malang: teknologi Google untuk pengembang: Flutter"),
             _s("Komunitas: Komunitas MOCAP (Mobile Computing); Fokus: pemrograman aplikasi mobile"),
             _s("Beasiswa: KIP Kuliah; Penyelenggara: Kementerian Agama; Sasaran: keluarga kurang mampu")]
    text, sources = compose_answer(None, lines, as_list=True)
    assert text.splitlines() == ["Mahasiswa dapat bergabung dengan komunitas berikut.", "- Komunitas Fun Java",
                                 "- Google Developer Student Club (GDSC) UIN Malang", "- Komunitas MOCAP (Mobile Computing)",
                                 "- KIP Kuliah [1]"]
    assert len(sources) == 1
    assert list_item("Telah lulus minimal 100 SKS.") is None
    assert list_item("Kurikulum dirancang untuk menghasilkan lulusan dengan profil berikut:") is None


def test_a_list_of_prose_lines_stays_whole() -> None:
    lines = [_s("Syarat Kerja Praktik:"), _s("Telah lulus minimal 100 SKS."),
             _s("Mengisi formulir pengajuan PKL dan mendapat persetujuan Koordinator PKL.")]
    text, _ = compose_answer(None, lines, as_list=True)
    assert text.splitlines() == ["Syarat Kerja Praktik:", "Telah lulus minimal 100 SKS.",
                                 "Mengisi formulir pengajuan PKL dan mendapat persetujuan Koordinator PKL. [1]"]


def test_a_list_starts_where_its_items_start() -> None:
    # the best-scored line is an item in the middle of the run: the list starts at the sentence introducing it
    from generation.compose import list_start

    texts = ["Profil lulusan prodi.", "Kurikulum dirancang untuk menghasilkan lulusan dengan profil berikut:",
             "Software Engineer: merancang perangkat lunak", "Data Scientist: menganalisis data",
             "Akademisi dan Peneliti: melanjutkan studi", "Capaian pembelajaran lulusan mencakup sikap."]
    assert list_start(texts, 4) == 1
    assert list_start(texts, 1) == 1  # the introducing sentence itself
    assert list_start(texts, 5) == 5  # prose after the run is no item
    assert list_start(["Software Engineer: merancang", "Data Scientist: menganalisis"], 1) == 0


def test_a_record_or_a_procedure_is_no_list_of_named_items() -> None:
    # one lecturer's fields (values, not descriptions) and steps with a colon keep their whole lines
    from generation.compose import list_item

    record = [_s("Nama: Prof. Dr. Suhartono, S.Si., M.Kom."), _s("NIP: 196805012000031001"),
              _s("Jabatan Fungsional: Guru Besar")]
    text, _ = compose_answer(None, record, as_list=True)
    assert text.splitlines()[0] == "Nama: Prof. Dr. Suhartono, S.Si., M.Kom."
    assert list_item("Perhatikan batas SKS: maksimal 24 SKS jika IP semester sebelumnya minimal 3,00") is None
    assert list_item("Catatan: mahasiswa wajib hadir tepat waktu") is None
    assert list_item("Python: bahasa pemrograman untuk analisis data") == "Python"
    # Wikipedia prose with a colon inside a parenthesis or after a comma (IDK-MRC tune passages: 93 of 10,988
    # sentences matched the bare "Label: …" shape, 1 passes, "Kota Pangkal Pinang: merupakan ibukota …")
    assert list_item("Kromosom (Greek: chroma, warna; dan soma, badan) merupakan struktur di dalam sel.") is None
    assert list_item("Won Korea Selatan (원) (simbol: ₩; kode: KRW) adalah mata uang resmi Korea Selatan.") is None
    assert list_item("General Electric Company, atau GE, NYSE: adalah sebuah perusahaan multinasional.") is None
    assert list_item("Kota Pangkal Pinang: merupakan ibukota Provinsi Kepulauan Bangka Belitung.") == "Kota Pangkal Pinang"


def test_a_lone_item_line_does_not_move_the_start_of_a_list() -> None:
    from generation.compose import list_start

    steps = ["Pilih menu KRS, lalu pilih mata kuliah.", "Software Engineer: merancang perangkat lunak",
             "Cetak KRS yang telah divalidasi."]
    assert list_start(steps, 1) == 1
    # without a sentence introducing it, the run starts at its first item
    assert list_start(["Profil lulusan prodi.", "Software Engineer: merancang", "Data Scientist: menganalisis"], 2) == 1


def test_the_test_corpus_names_every_page_once() -> None:
    # the store keys pages by doc_id: a repeated id silently replaces a page in the tests that store the corpus
    from tests.generation.corpus import documents

    ids = [d.doc_id for d in documents()]
    assert len(ids) == len(set(ids))


def test_a_dash_led_fragment_never_stands_alone():
    """A signature line ("– Supriyono, M.Kom., Ketua Program Studi") reads as a fragment: shown without its dash,
    after the title of the page it stands on, like a bare "Label: value" line."""
    fragment = EvidenceSentence("– Supriyono, M.Kom., Ketua Program Studi", 0, "c1", "http://x/", "Beranda", 3)
    text, _ = compose_answer(None, [fragment])
    assert text == "Beranda — Supriyono, M.Kom., Ketua Program Studi [1]"
    assert not text.lstrip().startswith(("–", "—", "-"))
    untitled = EvidenceSentence("— catatan kaki", 0, "c2", "http://x/", "", 4)
    assert compose_answer(None, [untitled])[0] == "catatan kaki [1]"


def test_the_refusals_related_topics_end_with_one_full_stop_after_a_title_that_ends_with_one() -> None:
    """A lecturer's page is titled with the degree ("Shoffin Nahwa Utama, M.T."): the list of related topics ends
    with that title's own full stop, not with a second one ("M.T.."), and a title without one gains it."""
    from generation.compose import abstain_text

    text = abstain_text(None, ["Kontak", "Tenaga Kependidikan", "Shoffin Nahwa Utama, M.T."])
    assert "Topik terkait yang mungkin membantu: Kontak; Tenaga Kependidikan; Shoffin Nahwa Utama, M.T.\n" in text
    assert "M.T.." not in text
    assert "membantu: Beasiswa; FAQ.\n" in abstain_text(None, ["Beasiswa", "FAQ"])
