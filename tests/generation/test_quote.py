"""Quoting the page around the reader's span: the sentence or the whole "Label: value" row, and a table's column."""

from __future__ import annotations

from generation.quote import column_rows, list_lines, other_rows, quote_span, row_fields, table_listing

PAGE = ("Mahasiswa dapat mengikuti program beasiswa berikut. Informasi dibuka di halaman Berita.\n"
        "Beasiswa: KIP Kuliah; Penyelenggara: Kementerian Agama; Sasaran: keluarga kurang mampu\n"
        "Beasiswa: Beasiswa Bank Indonesia; Penyelenggara: Bank Indonesia; Sasaran: IPK minimal 3,00\n"
        "– Supriyono, M.Kom., Ketua Program Studi\n"
        "Skripsi: 6 SKS")


def _at(text: str) -> tuple[int, int]:
    a = PAGE.index(text)
    return a, a + len(text)


def test_a_span_in_prose_quotes_its_sentence_only():
    q = quote_span(PAGE, *_at("halaman Berita"))
    assert q.text == "Informasi dibuka di halaman Berita."
    assert q.highlights == ("halaman Berita",)


def test_a_span_in_a_table_row_quotes_the_row_as_the_page_shows_it():
    q = quote_span(PAGE, *_at("Bank Indonesia; Sasaran"))
    assert q.text == "Beasiswa: Beasiswa Bank Indonesia; Penyelenggara: Bank Indonesia; Sasaran: IPK minimal 3,00"
    assert q.highlights == ("Bank Indonesia; Sasaran",)
    assert quote_span(PAGE, *_at("6 SKS")).text == "Skripsi: 6 SKS"


def test_no_leading_dash_fragment():
    q = quote_span(PAGE, *_at("Supriyono, M.Kom."))
    assert q.text.startswith("Supriyono") and "Supriyono, M.Kom." in q.highlights


def test_a_column_question_lists_each_row_with_that_column():
    rows = column_rows(PAGE, PAGE.index("keluarga kurang mampu"))
    assert rows == ["KIP Kuliah — Sasaran: keluarga kurang mampu", "Beasiswa Bank Indonesia — Sasaran: IPK minimal 3,00"]
    assert column_rows(PAGE, PAGE.index("KIP Kuliah")) == ["KIP Kuliah", "Beasiswa Bank Indonesia"]
    assert column_rows(PAGE, PAGE.index("halaman Berita")) is None  # prose, not a row
    assert column_rows(PAGE, PAGE.index("6 SKS")) is None  # a single row is no table


def test_the_rest_of_a_table_leaves_out_the_rows_already_named():
    """ "ada lagi yang lain?" after a reply about one row: the table's other rows, each with its second column."""
    djarum = "Beasiswa: Beasiswa Djarum Plus; Penyelenggara: Djarum Foundation; Sasaran: semester 4"
    table = PAGE.replace("\n– Supriyono", f"\n{djarum}\n– Supriyono")
    rest = other_rows(table, ["KIP"])
    assert rest is not None and rest.named == ("KIP Kuliah",)
    assert rest.rows == ("Beasiswa Bank Indonesia — Penyelenggara: Bank Indonesia",
                         "Beasiswa Djarum Plus — Penyelenggara: Djarum Foundation")
    rest = other_rows(table, ["kip kuliah", "Djarum Plus"])
    assert rest is not None and rest.rows == ("Beasiswa Bank Indonesia — Penyelenggara: Bank Indonesia",)
    # a name is matched as whole words of a row's name, never inside its other columns or inside a word
    assert other_rows(table, ["Kementerian Agama"]) is None
    assert other_rows(table, ["KI"]) is None
    assert other_rows(table, ["Beasiswa"]) is None  # a word several rows share names no one of them
    assert other_rows(PAGE, ["Supriyono"]) is None  # not a table row
    assert other_rows(table, []) is None
    assert other_rows(PAGE, ["KIP", "Bank Indonesia"]) is None  # every row named: nothing is left to show
    # a list of "Name: description" lines is a list too, shown as the page shows it
    page = LIST_PAGE.replace("Apakah", "Komunitas UINUX: Linux dan perangkat lunak open source\nApakah")
    rest = other_rows(page, ["ETH0"])
    assert rest is not None and rest.named == ("Komunitas ETH0",)
    assert rest.rows == ("Komunitas GDSC: pengembang aplikasi dengan teknologi Google.",
                         "Komunitas WEBOENDER: pengembang web front-end dan back-end.",
                         "Komunitas UINUX: Linux dan perangkat lunak open source")


def _stems(text: str) -> frozenset[str]:
    return frozenset(w.strip(".,:;?").lower() for w in text.split() if w.strip(".,:;?"))


def test_a_list_question_about_a_tables_items_gets_the_table():
    """ "ruang apa aja?" where the reader's span is a room's name in a table whose first column is "Ruang": each
    row, with the column the question's other words point at (its label or its values), else the second."""
    page = ("Gedung C punya ruang berikut.\n"
            "Ruang: Ruang Rapat; Lokasi: Lantai 2; Kapasitas: 20 orang\n"
            "Ruang: Ruang Sidang; Lokasi: Lantai 3; Kapasitas: 40 orang\n"
            "Ruang: Aula; Lokasi: Lantai 1; Kapasitas: 200 orang")
    at = page.index("Ruang Sidang")
    assert table_listing(page, _stems("ruang apa saja"), _stems, at) == [
        "Ruang Rapat — Lokasi: Lantai 2", "Ruang Sidang — Lokasi: Lantai 3", "Aula — Lokasi: Lantai 1"]
    assert table_listing(page, _stems("ruang yang kapasitas besar apa saja"), _stems, at)[0] == \
        "Ruang Rapat — Kapasitas: 20 orang"
    # a word of the question that some rows' values hold and others not picks those rows
    assert table_listing(page, _stems("ruang di lantai 3 apa saja"), _stems, at) == ["Ruang Sidang — Lokasi: Lantai 3"]
    # the span in another column: that row answers, not the list; a question about other things: no list
    assert table_listing(page, _stems("ruang apa saja"), _stems, page.index("Lantai 3")) is None
    assert table_listing(page, _stems("beasiswa apa saja"), _stems, at) is None
    # a word of one room's name: the question is about that room, not the list
    assert table_listing(page, _stems("ruang sidang ada fasilitas apa saja"), _stems, at) is None
    assert table_listing(PAGE, _stems("skripsi apa saja"), _stems, PAGE.index("6 SKS")) is None  # one row, no table


def test_the_word_that_chose_the_column_does_not_drop_rows():
    """ "lomba hadiahnya apa saja": "hadiah" picks the "Hadiah" column; that some rows' values say "hadiah" again
    and others not must not drop the others from the list (a list short of items reads as the whole list)."""
    page = ("Lomba tahunan himpunan:\n"
            "Lomba: Lomba Desain; Hadiah: hadiah uang tunai; Peserta: mahasiswa aktif\n"
            "Lomba: Lomba Esai; Hadiah: sertifikat dan buku; Peserta: mahasiswa baru\n"
            "Lomba: Lomba Robot; Hadiah: hadiah trofi; Peserta: tim tiga orang")
    at = page.index("Lomba Esai")
    assert table_listing(page, _stems("lomba hadiah apa saja"), _stems, at) == [
        "Lomba Desain — Hadiah: hadiah uang tunai", "Lomba Esai — Hadiah: sertifikat dan buku",
        "Lomba Robot — Hadiah: hadiah trofi"]
    # a word of the question outside the column's label still picks the rows that hold it
    assert table_listing(page, _stems("lomba hadiah untuk tim apa saja"), _stems, at) == [
        "Lomba Robot — Hadiah: hadiah trofi"]


def test_row_fields_needs_every_part_to_be_a_label_and_value():
    assert row_fields("Kromosom (Greek: chroma; soma: tubuh)") is None
    assert row_fields("A: 1; B: 2") == [("A", "1"), ("B", "2")]
    assert row_fields("Skripsi: 6 SKS") is None  # one field: a line, not a table row


LIST_PAGE = ("Komunitas Mahasiswa\n"
             "Mahasiswa dapat bergabung dengan komunitas berikut:\n"
             "Komunitas ETH0: belajar jaringan komputer dan keamanan.\n"
             "Komunitas GDSC: pengembang aplikasi dengan teknologi Google.\n"
             "Komunitas WEBOENDER: pengembang web front-end dan back-end.\n"
             "Apakah komunitas terbuka untuk mahasiswa baru?\n"
             "Ya, setiap awal semester.")


def test_a_list_question_gets_the_page_list_around_the_span():
    # the span in the middle item: the list starts at the sentence introducing the run, stops at the next question
    lines = list_lines(LIST_PAGE, LIST_PAGE.index("GDSC"), max_lines=12, max_chars=600)
    assert lines == ["Mahasiswa dapat bergabung dengan komunitas berikut:", "- Komunitas ETH0", "- Komunitas GDSC",
                     "- Komunitas WEBOENDER"]
    # cut at two lines, one item is no list: the lines stay whole
    assert list_lines(LIST_PAGE, LIST_PAGE.index("GDSC"), max_lines=2, max_chars=600) == [
        "Mahasiswa dapat bergabung dengan komunitas berikut:", "Komunitas ETH0: belajar jaringan komputer dan keamanan."]
    assert list_lines(LIST_PAGE, LIST_PAGE.index("setiap awal"), max_lines=12, max_chars=600) is None  # the last


def test_an_item_whose_description_opens_with_a_name_stays_an_item():
    """ "Komunitas UINUX: Linux dan …" between two items is an item too (its description opening with a capital made
    it look like a field and its value), so the list does not show that one line whole among the names."""
    page = ("Mahasiswa dapat bergabung dengan komunitas berikut:\n"
            "Komunitas ETH0: belajar jaringan komputer dan keamanan.\n"
            "Komunitas UINUX: Linux dan perangkat lunak open source.\n"
            "Komunitas WEBOENDER: pengembang web front-end dan back-end.")
    assert list_lines(page, page.index("ETH0"), max_lines=12, max_chars=600) == [
        "Mahasiswa dapat bergabung dengan komunitas berikut:", "- Komunitas ETH0", "- Komunitas UINUX",
        "- Komunitas WEBOENDER"]
    # a field and its value is no item, and nor is a line like it at the run's end
    record = ("Dosen pembina komunitas:\n"
              "Komunitas ETH0: belajar jaringan komputer.\n"
              "Komunitas GDSC: teknologi Google untuk pengembang.\n"
              "Ketua Komunitas: Ahmad Fauzi")
    assert list_lines(record, record.index("ETH0"), max_lines=12, max_chars=600)[-1] == "Ketua Komunitas: Ahmad Fauzi"


CLUBS = (
    "Mahasiswa dapat bergabung dengan komunitas minat dan bakat.\n"
    "Komunitas Catur Cepat: catur, strategi, dan turnamen daring\n"
    "Komunitas Lensa: fotografi dan videografi\n"
    "Klub Robotik (KR): robotika, mikrokontroler, dan sensor\n"
    "Komunitas Bit: robotika lomba dan pemrograman mikrokontroler\n"
)


def test_a_list_question_over_name_lines_keeps_the_lines_holding_its_word():
    """ "komunitas apa aja yg belajar mikrokontroler?" with the reader's span on an item's name in a run of
    "Name: description" lines: the lines that hold the question's telling word, as the page gives them."""
    from generation.quote import item_listing
    from retrieval.analyzer import Analyzer

    analyzer = Analyzer()

    def stems(text):
        return frozenset(analyzer(text))

    at = CLUBS.index("Lensa")
    lines = item_listing(CLUBS, stems("komunitas apa saja yang belajar mikrokontroler"), stems, at)
    assert lines == ["Klub Robotik (KR): robotika, mikrokontroler, dan sensor",
                     "Komunitas Bit: robotika lomba dan pemrograman mikrokontroler"]
    # the span in a description, not a name: the line itself answers, no list
    assert item_listing(CLUBS, stems("komunitas apa saja yang belajar mikrokontroler"), stems,
                        CLUBS.index("fotografi")) is None
    # a question that does not ask for the list's items (no word the names share)
    assert item_listing(CLUBS, stems("siapa yang belajar mikrokontroler"), stems, at) is None


def test_a_list_question_about_one_named_item_gets_no_list_of_name_lines():
    """ "komunitas lensa ada kegiatan apa aja?" names one item by a word only its name holds: it asks about that
    item, so the lines are not listed."""
    from generation.quote import item_listing
    from retrieval.analyzer import Analyzer

    analyzer = Analyzer()

    def stems(text):
        return frozenset(analyzer(text))

    assert item_listing(CLUBS, stems("komunitas lensa ada kegiatan apa saja"), stems, CLUBS.index("Lensa")) is None
