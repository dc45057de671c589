"""Acceptance on the bundled sample site: pages stored once, aliases and redirects collapse, PDF extracted,
skips counted, no boilerplate in chunks, one document per lecturer."""

from __future__ import annotations

import asyncio
from urllib.parse import urljoin

import pytest
from bs4 import BeautifulSoup

from bot.sample_site import content as C
from storage.docstore import DocumentStore
from sync_jobs.crawl import CrawlConfig, crawl_site
from tests.auxil.sample_site import bfs

pytestmark = pytest.mark.slow  # crawls the whole sample site

PDF = "/wp-content/uploads/2024/02/pedoman-skripsi-informatika-2024.pdf"


def config_for(base_url: str, **overrides) -> CrawlConfig:
    values = dict(seeds=(base_url + "/",), allow_private=True, delay=0.0, concurrency=4, retries=1,
                  backoff_base=0.01, timeout=3.0)
    values.update(overrides)
    return CrawlConfig(**values)


@pytest.fixture(scope="module")
def crawled(sample_site: str, tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("crawl") / "prodi.sqlite3"
    store = DocumentStore(path)
    report = asyncio.run(crawl_site(config_for(sample_site), store))
    yield report, store
    store.close()


def test_every_in_domain_page_is_stored_exactly_once(crawled, sample_site: str) -> None:
    report, store = crawled
    assert report.ok and report.failed == 0
    docs = store.documents()
    site = bfs(sample_site)
    by_url: dict[str, list] = {}
    for doc in docs:
        by_url.setdefault(doc.url, []).append(doc)
    for path, fetched in site.html.items():
        if "/category/" in path or "/page/" in path:
            continue  # archive pages only repeat excerpts: followed for links, not stored
        soup = BeautifulSoup(fetched.body, "html.parser")
        canonical = soup.find("link", rel="canonical")
        url = urljoin(fetched.url, canonical["href"]) if canonical else fetched.url
        assert url in by_url, f"{path} not stored"
        pages = [d for d in by_url[url] if d.kind in ("page", "pdf")]
        assert len(pages) <= 1, f"{path} stored {len(pages)} times"
    texts = [d.text for d in docs]
    assert len(texts) == len(set(texts)), "duplicate documents"
    assert report.fetched == report.changed and report.unchanged == 0


def test_alias_collapses_and_redirect_lands_on_canonical_url(crawled, sample_site: str) -> None:
    report, store = crawled
    urls = {d.url for d in store.documents()}
    assert sample_site + "/profile/" not in urls and sample_site + "/kurikulum/" not in urls
    profil = [d for d in store.documents() if d.url == sample_site + "/undergraduate-s1/" and d.kind == "page"]
    assert len(profil) == 1 and sample_site + "/profile/" in profil[0].urls
    curriculum = [d for d in store.documents() if d.kind == "curriculum"]
    assert len(curriculum) == 1 and curriculum[0].url == sample_site + "/curriculum/"
    assert sample_site + "/kurikulum/" in curriculum[0].urls
    assert report.skipped_urls[sample_site + "/kurikulum/"].startswith("redirected to")


def test_curriculum_lines_match_the_site(crawled) -> None:
    _, store = crawled
    lines = set(store.documents(kind="curriculum")[0].text.splitlines())
    for course in C.COURSES:
        assert f"{course.code} – {course.name} – {course.sks} SKS – Semester {course.semester} – {course.kind}" in lines


def test_pdf_is_extracted(crawled, sample_site: str) -> None:
    _, store = crawled
    pdfs = store.documents(kind="pdf")
    assert [d.url for d in pdfs] == [sample_site + PDF]
    assert len(pdfs[0].text.split()) > 100
    assert any(c.doc_id == pdfs[0].doc_id for c in store.chunks())


def test_404_external_binary_and_archives_are_skipped_and_counted(crawled, sample_site: str) -> None:
    report, _ = crawled
    reasons = report.skipped_urls
    assert reasons[sample_site + "/pengumuman-jadwal-uas-semester-ganjil-2019/"] == "HTTP 404"
    assert reasons[sample_site + "/wp-content/uploads/2024/02/template-proposal-skripsi.zip"] == "binary file"
    assert reasons["https://uin-malang.ac.id/"] == "external host"
    assert all(not u.startswith(sample_site) for u, r in reasons.items() if r == "external host")
    assert report.skipped == len(reasons) and report.as_json()["pages"]["skipped"] == len(reasons)
    assert set(report.as_json()) == {"pages", "duration_s", "errors"}
    assert set(report.as_json()["pages"]) == {"fetched", "changed", "unchanged", "failed", "removed", "skipped"}


def test_no_chunk_holds_footer_menu_or_cookie_banner(crawled, sample_site: str) -> None:
    _, store = crawled
    menu = ["Beranda", "Profil", "Akademik", "Dosen", "Laboratorium", "Kemahasiswaan", "Berita", "PMB", "Kontak"]
    for chunk in store.chunks():
        text = chunk.text
        if chunk.url != sample_site + "/contact/":
            assert C.ADDRESS not in text, chunk.url
        for junk in ("cookie", "Lewati ke konten", "Bagikan ini", "Tautan Penting", "Ikuti Kami", "Copyright",
                     "Kembali ke daftar"):
            assert junk not in text, (junk, chunk.url)
        lines = set(text.splitlines())
        assert len(lines & set(menu)) <= 1, (chunk.url, lines & set(menu))
        assert "Beranda Profil" not in text


def test_every_lecturer_is_its_own_document(crawled, sample_site: str) -> None:
    _, store = crawled
    lecturers = store.documents(kind="lecturer")
    for person in C.LECTURERS:
        mine = [d for d in lecturers if d.title == person.name]
        assert len(mine) == 1, person.name
        assert mine[0].url == f"{sample_site}/{person.slug}/"
        others = [p.name for p in C.LECTURERS if p.name != person.name]
        assert not any(f"Nama: {other}" in mine[0].text for other in others)


def test_chunks_are_bounded_and_carry_metadata(crawled) -> None:
    _, store = crawled
    for chunk in store.chunks():
        assert 0 < len(chunk.text.split()) <= 300
        assert chunk.doc_id and chunk.url.startswith("http") and chunk.title and chunk.content_hash and chunk.fetched_at
