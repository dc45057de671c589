"""The announcement rules (sync_jobs/announcements.py) on hand-made documents, and what extraction records about a
page for them (sync_jobs/extract.py: publication date and breadcrumb trail)."""

from __future__ import annotations

from datetime import date

from storage.models import Document
from sync_jobs.announcements import (
    AnnounceRules,
    detect,
    in_news_section,
    lead_sentences,
    main_text_changed,
    prefixes_from,
)
from sync_jobs.extract import parse_page

TODAY = date(2026, 11, 26)
RULES = AnnounceRules(today=TODAY)


def page(path: str, text: str = "Rapat dosen diadakan hari Senin di ruang rapat. Semua dosen hadir.", *,
         title: str = "Judul", kind: str = "page", **meta: str) -> Document:
    return Document(doc_id=path.strip("/") or "home", url=f"https://prodi.example.ac.id{path}", title=title,
                    text=text, content_hash=f"h-{text}", kind=kind, sections=(("", text),), meta=meta)


def test_the_news_section_comes_from_the_breadcrumb_or_the_path():
    assert in_news_section(page("/rapat/", trail="Berita", trail_paths="/news/"), RULES)
    assert in_news_section(page("/rapat/", trail="Akademik | Pengumuman"), RULES)
    assert in_news_section(page("/berita/rapat-dosen/"), RULES)
    assert not in_news_section(page("/supriyono/", trail="Dosen", trail_paths="/lecturer-and-staff/"), RULES)
    # listing pages are not news themselves
    for listing in ("/news/", "/berita/", "/category/pengumuman/", "/berita/page/2/", "/"):
        assert not in_news_section(page(listing, trail="Berita"), RULES), listing
    configured = AnnounceRules(prefixes=prefixes_from("/info/, https://x.example/agenda"), today=TODAY)
    assert configured.prefixes == ("/info/", "/agenda/")
    assert in_news_section(page("/info/krs-2026/"), configured)
    assert not in_news_section(page("/info/"), configured)
    assert not in_news_section(page("/rapat/", trail="Berita"), configured)  # the prefixes replace the default


def test_a_recent_publication_date_makes_any_page_news_and_an_old_one_does_not():
    recent = page("/jadwal-krs/", published="2026-11-20")
    old = page("/jadwal-krs-lama/", published="2026-09-01")
    docs = {d.doc_id: d for d in (recent, old)}
    assert [d.doc_id for d in detect(["jadwal-krs", "jadwal-krs-lama"], [], docs, {}, RULES)] == ["jadwal-krs"]
    assert detect(["jadwal-krs"], [], docs, {}, AnnounceRules(max_age_days=0, today=TODAY)) == []


def test_only_a_real_change_of_the_main_text_counts():
    before = page("/berita/x/", "Seminar pada 5 Desember.\nDilihat 120 kali")
    assert not main_text_changed(before, page("/berita/x/", "Seminar pada 5 Desember.\nDilihat 121 kali"))
    assert not main_text_changed(before, page("/berita/x/", "Seminar  pada 5 Desember.\nDilihat 120 kali"))
    assert main_text_changed(before, page("/berita/x/", "Seminar pada 12 Desember.\nDilihat 121 kali"))
    assert main_text_changed(None, before)
    new = page("/berita/x/", "Seminar pada 5 Desember.\nDilihat 125 kali")
    assert detect([], ["berita/x"], {"berita/x": new}, {"berita/x": before}, RULES) == []
    lecturer = page("/berita/y/", kind="lecturer")
    assert detect(["berita/y"], [], {"berita/y": lecturer}, {}, RULES) == []


def test_lead_sentences_are_verbatim_and_short():
    text = ("Koordinator Skripsi, Dr. Muhammad Ainul Yaqin, M.Kom., mengumumkan jadwal sidang. Sidang dimulai "
            "pada 3 Mei 2026 pukul 08.00 WIB. Berkas dikumpulkan sebelumnya.")
    assert lead_sentences(page("/a/", text)) == (
        "Koordinator Skripsi, Dr. Muhammad Ainul Yaqin, M.Kom., mengumumkan jadwal sidang. Sidang dimulai pada 3 "
        "Mei 2026 pukul 08.00 WIB.")
    assert lead_sentences(page("/a/", text), count=1) == (
        "Koordinator Skripsi, Dr. Muhammad Ainul Yaqin, M.Kom., mengumumkan jadwal sidang.")
    headed = page("/a/", "Seminar Nasional 2026 Program studi mengadakan seminar. Gratis.", title="Seminar Nasional 2026")
    assert lead_sentences(headed) == "Program studi mengadakan seminar. Gratis."  # the title run into the text
    opens = page("/a/", "Seminar Nasional 2026 dibuka untuk umum. Gratis.", title="Seminar Nasional 2026")
    assert lead_sentences(opens) == "Seminar Nasional 2026 dibuka untuk umum. Gratis."  # a sentence: kept whole
    long = "kata " * 200
    cut = lead_sentences(page("/a/", long.strip() + "."), max_chars=100)
    assert len(cut) <= 102 and cut.endswith(" …") and long.startswith(cut[:-2])


def test_extraction_records_the_date_and_the_trail():
    html = b"""<html><head><title>Beasiswa dibuka</title>
<script type="application/ld+json">{"@type": "BreadcrumbList", "itemListElement": [
 {"@type": "ListItem", "position": 1, "name": "Beranda", "item": "/"},
 {"@type": "ListItem", "position": 2, "name": "Berita", "item": "/news/"}]}</script></head>
<body><main><article><h1>Beasiswa dibuka</h1><div class="entry-meta"><time class="entry-date published"
 datetime="2026-11-20T08:00:00+07:00">20 November 2026</time></div>
<p>Pendaftaran beasiswa dibuka untuk semua mahasiswa aktif mulai hari ini sampai akhir bulan.</p>
</article></main></body></html>"""
    extract = parse_page("https://prodi.example.ac.id/beasiswa-dibuka/", html, "text/html")
    doc = extract.documents[0]
    assert doc.meta == {"published": "2026-11-20", "trail": "Berita", "trail_paths": "/news/"}
    assert "20 November" not in doc.text and "Berita" not in doc.text  # not part of the main text or its hash
