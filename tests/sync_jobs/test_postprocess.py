"""Site-wide clean-up: boilerplate lines repeated across pages, exact and near duplicates, listing excerpts."""

from __future__ import annotations

from sync_jobs.extract import make_document
from sync_jobs.postprocess import postprocess

BOILER = "Kampus: Jl. Contoh No. 1, Malang 65144 · Telepon (0341) 000000"


def page(path: str, title: str, *lines: str):
    doc = make_document(f"http://p.example/{path}", title, [("", "\n".join(lines))])
    assert doc is not None
    return doc


def body(i: int) -> str:
    return (f"Halaman {i} menjelaskan topik nomor {i} dengan rinci, termasuk syarat, jadwal, dan biaya "
            f"yang berlaku untuk mahasiswa angkatan {2000 + i}.")


def test_lines_on_most_pages_are_removed_even_inside_main_content() -> None:
    raw = {f"k{i}": (page(f"p{i}", f"Judul {i}", body(i), BOILER),) for i in range(6)}
    raw["k6"] = (page("p6", "Judul 6", body(6)),)
    raw["k0"] = (page("", "Beranda", body(0), BOILER, "Beranda Profil Akademik", "© 2024 Prodi. All rights reserved"),)
    for i in range(1, 6):
        raw[f"k{i}"] = (page(f"p{i}", f"Judul {i}", body(i), BOILER, "Beranda Profil Akademik",
                             "© 2024 Prodi. All rights reserved"),)
    docs = postprocess(raw)
    pages = [d for d in docs if d.title != "Informasi umum situs"]
    assert len(pages) == 7
    assert not any(BOILER in d.text or "Beranda Profil" in d.text or "©" in d.text for d in pages)
    assert all(f"topik nomor {i}" in d.text for i, d in enumerate(sorted(pages, key=lambda d: d.url)))
    # the contact facts among the removed lines survive once, in one small document; menus and © do not
    info = [d for d in docs if d.title == "Informasi umum situs"]
    assert len(info) == 1 and BOILER in info[0].text and info[0].url == "http://p.example/"
    assert "Beranda Profil" not in info[0].text and "©" not in info[0].text


def test_exact_and_near_duplicates_collapse_and_remember_urls() -> None:
    text = " ".join(f"Kalimat {i} tentang prosedur pengisian KRS daring setiap awal semester." for i in range(12))
    near = text.replace("Kalimat 11", "Kalimat sebelas")
    raw = {
        "a": (page("profil", "Profil", text),),
        "b": (page("profile-lama", "Profil", text),),
        "c": (page("?p=12", "Profil", near),),
        "d": (page("lain", "Lain", body(1)),),
    }
    docs = postprocess(raw)
    assert len(docs) == 2
    kept = next(d for d in docs if d.title == "Profil")
    assert kept.url == "http://p.example/profil"
    assert set(kept.urls) == {"http://p.example/profil", "http://p.example/profile-lama", "http://p.example/?p=12"}


def test_listing_excerpts_are_dropped_but_the_post_keeps_them() -> None:
    post_text = "Seminar proposal skripsi dilaksanakan pada 14 April 2025 di ruang seminar B.2.05 gedung saintek."
    post = page("seminar", "Jadwal Seminar Proposal Skripsi", post_text, "Peserta wajib mendaftar lebih dahulu.")
    listing = make_document("http://p.example/", "Beranda", [
        ("Sambutan", "Selamat datang di laman program studi kami yang baru."),
        ("Jadwal Seminar Proposal Skripsi", "10 Maret 2025\n" + post_text[:60] + " […]"),
    ])
    docs = {d.url: d for d in postprocess({"a": (post,), "b": (listing,)})}
    assert post_text in docs["http://p.example/seminar"].text
    home = docs["http://p.example/"].text
    assert "Seminar proposal skripsi dilaksanakan" not in home and "Selamat datang" in home


def test_a_canonical_link_shared_by_different_pages_does_not_merge_them() -> None:
    from sync_jobs.extract import parse_page

    def html(title: str, text: str) -> bytes:
        return (f'<html><head><title>{title}</title><link rel="canonical" href="http://p.example/"></head>'
                f"<body><main><h1>{title}</h1><p>{text}</p></main></body></html>").encode()

    home = parse_page("http://p.example/", html("Beranda", body(1)), "text/html").documents
    pmb = parse_page("http://p.example/pmb/", html("PMB", body(2)), "text/html").documents
    docs = postprocess({"home": home, "pmb": pmb})
    assert {d.url for d in docs} == {"http://p.example/", "http://p.example/pmb/"}
    assert len({d.doc_id for d in docs}) == 2


def test_deeply_nested_markup_still_gives_text() -> None:
    from sync_jobs.extract import extract

    html = "<html><body>" + "<div>" * 3000 + "<p>Informasi beasiswa tersedia setiap semester.</p>" + "</div>" * 3000
    docs = extract("http://p.example/dalam", html.encode(), "text/html")
    assert docs and "beasiswa" in docs[0].text


def test_the_same_lecturer_written_with_other_degrees_is_one_document() -> None:
    from sync_jobs.extract import make_document

    card = make_document("http://p.example/dosen/", "Budi Santoso M.T.", [("Budi Santoso M.T.", "NIDN: 001")],
                         kind="lecturer", key="#lecturer:budi")
    profile = make_document("http://p.example/budi/", "Dr. Ir. Budi Santoso, S.T., M.T.",
                            [("Dr. Ir. Budi Santoso, S.T., M.T.", "NIDN: 001\nBidang Keahlian: Jaringan")],
                            kind="lecturer", key="#lecturer:dr budi")
    docs = postprocess({"a": (card,), "b": (profile,)})
    assert len(docs) == 1 and docs[0].url == "http://p.example/budi/"
    assert set(docs[0].urls) == {"http://p.example/budi/", "http://p.example/dosen/"}
