"""Extraction: main content without boilerplate, lecturers and curriculum as entities, PDFs, charsets, bad HTML."""

from __future__ import annotations

import io

from sync_jobs.decode import decode_body
from sync_jobs.extract import extract, parse_page
from sync_jobs.normalize import normalize_text

PAGE = """<!doctype html><html><head><title>Dosen &#8211; Prodi TI</title>
<link rel="canonical" href="http://prodi.example/dosen/"></head><body>
<header class="site-header"><nav><ul><li><a href="/">Beranda</a></li><li><a href="/dosen/">Dosen</a></li></ul></nav></header>
<div id="cookie-notice">Kami memakai cookie agar situs berjalan baik. Setuju</div>
<main><article><h1>Daftar Dosen</h1>
<p>Prodi memiliki dosen tetap di lima bidang keahlian utama yang mendukung kurikulum.</p>
<div class="card"><h3>Dr. Budi Santoso, M.Kom.</h3><p>NIDN: 0012345678</p><p>Bidang Keahlian: Kecerdasan Buatan</p>
<p>Email: budi@prodi.example</p></div>
<div class="card"><h3>Siti Aminah, M.T.</h3><p><strong>NIDN</strong>: 0098765432</p><p>Bidang Keahlian: Jaringan</p></div>
<h2>Kurikulum Semester 1</h2>
<table><thead><tr><th>No</th><th>Kode MK</th><th>Nama Mata Kuliah</th><th>SKS</th><th>Sifat</th></tr></thead>
<tr><td>1</td><td>IF101</td><td>Algoritma dan Pemrograman</td><td>4</td><td>Wajib</td></tr>
<tr><td>2</td><td>IF102</td><td>Kalkulus</td><td>3</td><td>Wajib</td></tr></table>
<h2>Mata Kuliah Pilihan Semester V</h2>
<table><tr><th>Kode</th><th>Mata Kuliah</th><th>SKS</th></tr><tr><td>IF551</td><td>Data Mining</td><td>3</td></tr></table>
<div class="sharedaddy"><h3>Bagikan ini:</h3><a href="#">Facebook</a></div>
</article></main>
<aside class="widget-area"><h2>Berita Terbaru</h2><ul><li>Wisuda</li></ul></aside>
<footer class="site-footer"><p>Jl. Contoh No. 1, Malang 65144</p></footer></body></html>"""


def _by_kind(docs):
    out: dict[str, list] = {}
    for doc in docs:
        out.setdefault(doc.kind, []).append(doc)
    return out


def test_page_is_split_into_lecturers_curriculum_and_clean_main_text() -> None:
    page = parse_page("http://prodi.example/dosen", PAGE.encode(), "text/html; charset=utf-8")
    kinds = _by_kind(page.documents)
    assert page.canonical == "http://prodi.example/dosen/"
    assert {d.title for d in kinds["lecturer"]} == {"Dr. Budi Santoso, M.Kom.", "Siti Aminah, M.T."}
    budi = next(d for d in kinds["lecturer"] if d.title.startswith("Dr. Budi"))
    assert "NIDN: 0012345678" in budi.text and "Bidang Keahlian: Kecerdasan Buatan" in budi.text
    assert "Siti" not in budi.text
    lines = kinds["curriculum"][0].text.splitlines()
    assert "IF101 – Algoritma dan Pemrograman – 4 SKS – Semester 1 – Wajib" in lines
    assert "IF102 – Kalkulus – 3 SKS – Semester 1 – Wajib" in lines
    assert "IF551 – Data Mining – 3 SKS – Semester 5 – Pilihan" in lines
    main = kinds["page"][0]
    assert main.title == "Daftar Dosen"
    assert "lima bidang keahlian" in main.text
    everything = "\n".join(d.text for d in page.documents)
    for junk in ("cookie", "Jl. Contoh", "Berita Terbaru", "Bagikan", "Beranda", "0012345678\nSiti"):
        assert junk not in everything
    assert all(d.url == "http://prodi.example/dosen/" for d in page.documents)
    assert "http://prodi.example/" in page.links


def test_single_profile_page_is_one_lecturer_document_with_field_lines() -> None:
    html = """<html><body><main><h1>Prof. Dr. Suhartono, S.Si., M.Kom.</h1><dl><dt>NIP</dt><dd>1968</dd>
    <dt>Pendidikan</dt><dd>S1 Matematika, ITS<br>S2 Informatika, ITS</dd><dt>Scopus ID</dt><dd>5646</dd></dl>
    <p>Beliau meneliti jaringan saraf tiruan untuk pengenalan pola.</p></main></body></html>"""
    docs = extract("http://prodi.example/prof-suhartono/", html.encode(), "text/html")
    assert [d.kind for d in docs] == ["lecturer"]
    doc = docs[0]
    assert doc.title == "Prof. Dr. Suhartono, S.Si., M.Kom."
    assert "Pendidikan: S1 Matematika, ITS; S2 Informatika, ITS" in doc.text
    assert "Scopus ID: 5646" in doc.text and "jaringan saraf tiruan" in doc.text


def test_normalisation_nfkc_invisible_dashes_whitespace() -> None:
    raw = "KRS\u00a0\u2014 Online,  Visi\u200b Prodi\ufeff\n\n\n\nﬁnal\u2011test   x"
    assert normalize_text(raw) == "KRS – Online, Visi Prodi\n\nfinal-test x"


def test_non_utf8_and_wrong_declared_charset_are_decoded() -> None:
    text = "Université – Ma’ruf"
    assert decode_body(text.encode("cp1252"), "text/html; charset=windows-1252") == text
    assert decode_body(text.encode("utf-8"), "text/html; charset=iso-8859-1") == text
    body = f'<html><head><meta charset="windows-1252"></head><body><main><p>{text} lulus 2017 dengan baik sekali.</p></main></body></html>'
    docs = extract("http://prodi.example/a", body.encode("cp1252"), "text/html")
    assert text in docs[0].text


def test_malformed_html_still_gives_text() -> None:
    html = b"<html><body><div><p>Pendaftaran dibuka <b>1 Mei<p>Syarat: ijazah SMA<table><tr><td>Biaya<td>Rp 5 juta</div>"
    docs = extract("http://prodi.example/pmb", html, "text/html")
    text = docs[0].text
    assert "Pendaftaran dibuka" in text and "ijazah SMA" in text and "Rp 5 juta" in text


def test_pdf_text_is_extracted() -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.set_title("Pedoman Skripsi")
    pdf.multi_cell(0, 8, "Skripsi minimal 6 SKS dan dibimbing oleh dua dosen pembimbing.")
    data = bytes(pdf.output())
    docs = extract("http://prodi.example/wp-content/uploads/pedoman.pdf", data, "application/pdf")
    assert docs[0].kind == "pdf" and docs[0].title == "Pedoman Skripsi"
    assert "dua dosen pembimbing" in docs[0].text


def test_noindex_and_unsupported_types() -> None:
    import pytest

    page = parse_page("http://p.example/x", b'<html><head><meta name="robots" content="noindex"></head>'
                      b"<body><p>Rahasia</p><a href='/y'>y</a></body></html>", "text/html")
    assert page.noindex and not page.documents and page.links == ("http://p.example/y",)
    with pytest.raises(ValueError, match="only HTML and PDF"):
        extract("http://p.example/z.png", io.BytesIO(b"x").read(), "image/png")


ELEMENTOR = """<!DOCTYPE html><html lang="id"><head><meta charset="UTF-8"><title>Visi Misi &#8211; Informatika</title></head>
<body class="page-template elementor-default elementor-kit-5 elementor-page elementor-page-120">
<div data-elementor-type="header" data-elementor-id="77" class="elementor elementor-77 elementor-location-header">
<section class="elementor-section elementor-top-section"><div class="elementor-container"><div class="elementor-column">
<div class="elementor-widget elementor-widget-text-editor"><div class="elementor-widget-container">Jl. Gajayana 50 Malang | Telp 0341-551354 | Email: if@uin.ac.id</div></div>
<div class="elementor-widget elementor-widget-nav-menu"><div class="elementor-widget-container"><nav class="elementor-nav-menu--main"><ul class="elementor-nav-menu"><li class="menu-item"><a href="/">Beranda</a></li><li class="menu-item"><a href="/profil/">Profil</a></li><li class="menu-item"><a href="/akademik/">Akademik</a></li></ul></nav></div></div>
</div></div></section></div>
<div data-elementor-type="wp-page" data-elementor-id="120" class="elementor elementor-120">
<section class="elementor-section"><div class="elementor-container"><div class="elementor-column"><div class="elementor-widget-wrap">
<div class="elementor-element elementor-widget elementor-widget-heading"><div class="elementor-widget-container"><h2 class="elementor-heading-title">Visi</h2></div></div>
<div class="elementor-element elementor-widget elementor-widget-text-editor"><div class="elementor-widget-container"><p>Menjadi program studi informatika yang unggul dan berdaya saing internasional pada tahun 2030.</p></div></div>
<div class="elementor-element elementor-widget elementor-widget-heading"><div class="elementor-widget-container"><h2 class="elementor-heading-title">Misi</h2></div></div>
<div class="elementor-element elementor-widget elementor-widget-text-editor"><div class="elementor-widget-container"><ol><li>Menyelenggarakan pendidikan informatika berkualitas.</li><li>Melaksanakan penelitian yang bermanfaat bagi masyarakat.</li><li>Melaksanakan pengabdian kepada masyarakat.</li></ol></div></div>
<div class="elementor-element elementor-widget elementor-widget-icon-list"><div class="elementor-widget-container"><ul class="elementor-icon-list-items"><li class="elementor-icon-list-item"><span class="elementor-icon-list-text">Akreditasi: Unggul</span></li><li class="elementor-icon-list-item"><span class="elementor-icon-list-text">Jumlah mahasiswa aktif: 812</span></li></ul></div></div>
</div></div></div></section></div>
<div data-elementor-type="footer" class="elementor elementor-location-footer"><p>© 2024 Informatika. All rights reserved.</p></div>
</body></html>
"""


def test_page_builder_markup_keeps_headings_and_drops_builder_header_footer() -> None:
    docs = extract("https://if.example.ac.id/visi-misi/", ELEMENTOR.encode(), "text/html; charset=UTF-8")
    assert [d.kind for d in docs] == ["page"]
    doc = docs[0]
    assert doc.title == "Visi Misi"
    sections = dict(doc.sections)
    assert "unggul dan berdaya saing" in sections["Visi"]
    assert "pengabdian kepada masyarakat" in sections["Misi"] and "Jumlah mahasiswa aktif: 812" in doc.text
    for junk in ("Gajayana", "Beranda", "All rights reserved"):
        assert junk not in doc.text


def test_an_announcement_with_one_contact_nip_stays_a_page() -> None:
    html = """<html><body><main><h1>Pengumuman Yudisium Periode Agustus</h1>
    <p>Yudisium dilaksanakan pada 15 Agustus di aula gedung saintek untuk seluruh mahasiswa yang telah lulus.</p>
    <p>NIP: 197001012000031001</p><p>Email: akademik@prodi.example</p></main></body></html>"""
    docs = extract("http://prodi.example/yudisium/", html.encode(), "text/html")
    assert [d.kind for d in docs] == ["page"]


def test_title_prefers_the_post_title_over_an_h1_inside_the_text() -> None:
    html = """<html><head><title>Jadwal Wisuda 2024 &#8211; Prodi TI</title></head><body>
    <div class="post-content"><h2 class="postitle">Jadwal Wisuda 2024</h2><h1>Persiapan</h1>
    <p>Wisuda periode pertama dilaksanakan pada bulan Maret di gedung serbaguna kampus utama.</p></div></body></html>"""
    docs = extract("http://prodi.example/wisuda-2024/", html.encode(), "text/html")
    assert docs[0].title == "Jadwal Wisuda 2024"


def test_editor_tables_collapsed_answers_and_breadcrumbs() -> None:
    html = """<html><head><title>Kurikulum</title></head><body><main><h1>Kurikulum</h1>
    <p>Beranda » Akademik » Kurikulum</p>
    <p>Struktur kurikulum program sarjana disusun per semester sesuai capaian pembelajaran lulusan.</p>
    <h3>Semester II</h3>
    <table><tr><td>Kode MK</td><td>Mata Kuliah</td><td>SKS</td></tr>
    <tr><td>TIF201</td><td>Struktur Data</td><td>4</td></tr><tr><td>TIF202</td><td>Basis Data</td><td>3</td></tr></table>
    <div class="faq"><h4>Berapa lama masa studi?</h4><div class="answer" style="display:none" hidden>
    Masa studi maksimal 14 semester sesuai peraturan akademik.</div></div></main></body></html>"""
    docs = {d.kind: d for d in extract("http://prodi.example/kurikulum/", html.encode(), "text/html")}
    lines = docs["curriculum"].text.splitlines()
    assert "TIF201 – Struktur Data – 4 SKS – Semester 2 – Wajib" in lines
    page = docs["page"].text
    assert "maksimal 14 semester" in page
    assert "Beranda »" not in page


def test_card_header_and_footer_inside_content_are_kept() -> None:
    cards = "".join(
        f'<div class="card"><div class="card-header"><h3>{name}</h3></div><div class="card-body"><p>NIDN: {nidn}</p>'
        f'<p>Bidang Keahlian: {field}</p></div><div class="card-footer">Email: {mail}</div></div>'
        for name, nidn, field, mail in [("Dr. Ani Lestari, M.Kom.", "0011", "Data Science", "ani@p.example"),
                                        ("Bambang Irawan, M.T.", "0022", "Jaringan", "bambang@p.example")]
    )
    html = f"<html><body><header class='header'>Logo Prodi</header><main><h1>Dosen</h1>{cards}</main>" \
           f"<div class='footer-widgets'>Alamat kampus</div></body></html>"
    docs = {d.title: d for d in extract("http://p.example/dosen/", html.encode(), "text/html")}
    assert "Email: ani@p.example" in docs["Dr. Ani Lestari, M.Kom."].text
    assert "Email: bambang@p.example" in docs["Bambang Irawan, M.T."].text
    assert not any("Alamat kampus" in d.text or "Logo Prodi" in d.text for d in docs.values())


STAFF = """<!doctype html><html><head><title>Tenaga Kependidikan &#8211; Prodi TI</title></head><body>
<main><article><h1 class="entry-title">Tenaga Kependidikan</h1><div class="entry-content">
<figure class="wp-block-table"><table><thead><tr><th>Nama</th><th>Jabatan</th><th>Email</th></tr></thead><tbody>
<tr><td>Siti Maslahah, S.E.</td><td>Kepala Urusan Administrasi Prodi</td><td>admin@prodi.example</td></tr>
<tr><td>Rizal Fahmi, A.Md.</td><td>Laboran Teaching Laboratory</td><td>laboran@prodi.example</td></tr>
</tbody></table></figure>
<p>Layanan administrasi program studi buka Senin–Jumat, 07.30–16.00 WIB di ruang administrasi B.2.03.</p>
</div></article></main></body></html>"""


def test_the_page_title_is_not_glued_to_the_text_left_after_a_staff_table() -> None:
    """Once the staff table became records, trafilatura read the title and the paragraph under it as one paragraph
    ("Tenaga Kependidikan Layanan administrasi …"), and a reply quoting it began with the page's title."""
    page = parse_page("http://prodi.example/staff/", STAFF.encode(), "text/html; charset=utf-8")
    kinds = _by_kind(page.documents)
    assert {d.title for d in kinds["lecturer"]} == {"Siti Maslahah, S.E.", "Rizal Fahmi, A.Md."}
    (rest,) = kinds["page"]
    assert rest.title == "Tenaga Kependidikan"
    assert rest.text.startswith("Layanan administrasi program studi buka"), rest.text
