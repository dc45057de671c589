"""The bundled sample prodi site, served over real HTTP on loopback, and the dev datasets written against it."""

from __future__ import annotations

import email.utils
import io
import json
import os
import re
import subprocess
import sys
import urllib.error
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup

from bot.sample_site import SampleSite, bundled_site_root
from tests.auxil.sample_site import Crawl, bfs, fetch, main_text, pdf_text

pytestmark = pytest.mark.slow  # crawls the whole sample site

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "tests" / "data" / "eval"
PDF = "/wp-content/uploads/2024/02/pedoman-skripsi-informatika-2024.pdf"
ZIP = "/wp-content/uploads/2024/02/template-proposal-skripsi.zip"
IMAGE = "/wp-content/uploads/2023/08/gedung-sains-dan-teknologi.jpg"
REQUIRED_PATHS = (
    "/", "/undergraduate-s1/", "/vision-mission/", "/history/", "/organization-structure/", "/accreditation/",
    "/curriculum/", "/lecturer-and-staff/", "/laboratorium/", "/organization-and-community/", "/fun-java/",
    "/etho/", "/news/", "/scholarship/", "/admission-pmb/", "/contact/", "/academic-calendar/", "/krs-procedure/",
    "/kerja-praktik-pkl/", "/faq/", "/thesis-guide/",
)


@pytest.fixture(scope="module")
def crawl(sample_site: str) -> Crawl:
    return bfs(sample_site)


def _soup(res) -> BeautifulSoup:
    return BeautifulSoup(res.text(), "html.parser")


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


# --- reachability --------------------------------------------------------------------------------------------


def test_at_least_50_html_pages_reachable_from_home(crawl: Crawl) -> None:
    assert len(crawl.html) >= 50, sorted(crawl.html)
    missing = [p for p in REQUIRED_PATHS if p not in crawl.html]
    assert not missing, f"not reachable from /: {missing}"
    for path, res in crawl.html.items():
        assert res.headers["Content-Type"].startswith("text/html; charset="), path


def test_crawl_meets_pdf_zip_external_broken_and_redirect(crawl: Crawl, sample_site: str) -> None:
    pdf = crawl.other[PDF]
    assert pdf.content_type == "application/pdf"
    text = pdf_text(pdf.body)
    assert "PEDOMAN PENULISAN SKRIPSI" in text and "Turnitin paling tinggi 25%" in text

    archive = crawl.other[ZIP]
    assert archive.content_type == "application/zip"
    with zipfile.ZipFile(io.BytesIO(archive.body)) as zf:
        assert "template-proposal/proposal.md" in zf.namelist()

    assert list(crawl.broken.values()) == [404], crawl.broken  # exactly one deliberate broken link
    assert crawl.redirected.get("/kurikulum/") == "/curriculum/"
    assert any(urlsplit(u).netloc == "uin-malang.ac.id" for u in crawl.external)
    assert all(not u.startswith(sample_site) for u in crawl.external)


def test_image_is_served_as_jpeg(sample_site: str, crawl: Crawl) -> None:
    facilities = _soup(crawl.html["/facilities/"])
    assert facilities.find("img", src=IMAGE) is not None
    res = fetch(sample_site + IMAGE)
    assert res.status == 200 and res.content_type == "image/jpeg"
    assert res.body[:3] == b"\xff\xd8\xff"


def test_every_page_has_the_wordpress_chrome(crawl: Crawl) -> None:
    footers = set()
    for path, res in crawl.html.items():
        soup = _soup(res)
        assert soup.select_one("#site-navigation .sub-menu"), f"{path}: no mega-menu"
        assert soup.select_one("#cookie-law-info-bar"), f"{path}: no cookie banner"
        assert soup.find("script") and soup.find("style"), f"{path}: no inline script/style"
        assert soup.select_one("#secondary .widget"), f"{path}: no sidebar widgets"
        assert soup.select_one(".entry-content"), f"{path}: no main content"
        canonical = soup.find("link", rel="canonical")
        assert canonical and canonical["href"].startswith("/"), f"{path}: canonical must be host-relative"
        if path != "/":
            assert soup.select_one(".ast-breadcrumbs"), f"{path}: no breadcrumbs"
        footers.add(" ".join(soup.select_one("#colophon").get_text(" ").split()))
    assert len(footers) == 1, "the footer (address and contacts) must be identical on every page"
    assert "Jl. Gajayana No. 50" in footers.pop()


# --- server behaviour ----------------------------------------------------------------------------------------


def test_robots_and_sitemaps_use_the_request_host(sample_site: str, crawl: Crawl) -> None:
    robots = fetch(sample_site + "/robots.txt")
    assert robots.status == 200 and robots.content_type == "text/plain"
    lines = robots.text().splitlines()
    assert "Disallow: /wp-admin/" in lines
    assert f"Sitemap: {sample_site}/wp-sitemap.xml" in lines
    assert fetch(sample_site + "/wp-admin/").status == 403

    ns = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    index = fetch(sample_site + "/wp-sitemap.xml")
    assert index.status == 200 and index.content_type == "application/xml"
    children = [e.text for e in ET.fromstring(index.body).findall("sm:sitemap/sm:loc", ns)]
    assert len(children) == 2
    locs = []
    for child in children:
        assert child.startswith(sample_site + "/")
        locs += [e.text for e in ET.fromstring(fetch(child).body).findall("sm:url/sm:loc", ns)]
    assert len(locs) >= 50
    paths = {urlsplit(loc).path for loc in locs}
    assert all(loc.startswith(sample_site + "/") for loc in locs)
    assert paths <= set(crawl.html), paths - set(crawl.html)
    assert "/profile/" not in paths and "/kurikulum/" not in paths  # only canonical URLs


def test_redirects_are_301_to_the_canonical_url(sample_site: str) -> None:
    res = fetch(sample_site + "/kurikulum/", follow=False)
    assert res.status == 301 and res.headers["Location"] == "/curriculum/"
    res = fetch(sample_site + "/curriculum", follow=False)  # WordPress adds the trailing slash
    assert res.status == 301 and res.headers["Location"] == "/curriculum/"


def test_missing_pages_are_404(sample_site: str) -> None:
    for path in ("/pengumuman-jadwal-uas-semester-ganjil-2019/", "/no/such/page/", "/_site.json", "/../etc/passwd"):
        res = fetch(sample_site + path)
        assert res.status == 404, path
    res = fetch(sample_site + "/no-such-page/")
    assert "Halaman tidak ditemukan" in res.text()


def test_one_page_at_two_urls(sample_site: str) -> None:
    a, b = fetch(sample_site + "/profile/"), fetch(sample_site + "/undergraduate-s1/")
    assert a.status == b.status == 200 and a.url.endswith("/profile/")
    assert a.body == b.body
    assert _soup(a).find("link", rel="canonical")["href"] == "/undergraduate-s1/"


def test_windows_1252_page_decodes_with_its_declared_charset(sample_site: str) -> None:
    res = fetch(sample_site + "/alumni-testimonials/")
    assert res.status == 200
    assert res.headers["Content-Type"] == "text/html; charset=windows-1252"
    with pytest.raises(UnicodeDecodeError):
        res.body.decode("utf-8")
    text = res.text()
    assert "Université de Lyon" in text and "Teknik Informatika – cerita" in text
    assert '<meta charset="windows-1252">' in text


def test_conditional_get_gives_304(sample_site: str) -> None:
    first = fetch(sample_site + "/curriculum/")
    etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
    assert etag and modified
    again = fetch(sample_site + "/curriculum/", headers={"If-None-Match": etag})
    assert again.status == 304 and again.body == b""
    assert fetch(sample_site + "/curriculum/", headers={"If-Modified-Since": modified}).status == 304
    assert fetch(sample_site + "/curriculum/", headers={"If-None-Match": '"other"'}).status == 200
    old = email.utils.formatdate(0, usegmt=True)
    assert fetch(sample_site + "/curriculum/", headers={"If-Modified-Since": old}).status == 200


def test_mutable_site_edits_downtime_and_restart(mutable_sample_site: SampleSite) -> None:
    site = mutable_sample_site
    assert site.root != bundled_site_root() and (site.root / "index.html").is_file()
    url = site.url("/fun-java/")
    before = fetch(url)
    page = site.root / "fun-java" / "index.html"
    page.write_text(page.read_text(encoding="utf-8").replace("Java Class", "Kelas Java Lanjutan"), encoding="utf-8")
    after = fetch(url)
    assert "Kelas Java Lanjutan" in after.text() and after.headers["ETag"] != before.headers["ETag"]
    assert fetch(url, headers={"If-None-Match": before.headers["ETag"]}).status == 200

    site.set_down(True)
    assert fetch(url).status == 503
    site.set_down(False)
    assert fetch(url).status == 200

    base = site.base_url
    site.stop()
    with pytest.raises(urllib.error.URLError):
        fetch(url)
    site.start()
    assert site.base_url == base and fetch(url).status == 200
    # the bundled copy is untouched
    assert "Kelas Java Lanjutan" not in (bundled_site_root() / "fun-java" / "index.html").read_text(encoding="utf-8")


def test_sample_site_command_serves_and_prints_json() -> None:
    env = {**os.environ, "PRODI_BOT_TESTING": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "sample-site", "--port", "0", "--json"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        info = json.loads(proc.stdout.readline())
        assert info["url"].startswith("http://127.0.0.1:") and info["port"] > 0
        assert fetch(info["url"] + "fun-java/").status == 200
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == 0


def test_committed_site_matches_the_generator(tmp_path: Path) -> None:
    from bot.sample_site import build_site

    build_site.build(tmp_path / "site")
    generated = {p.relative_to(tmp_path / "site") for p in (tmp_path / "site").rglob("*") if p.is_file()}
    bundled = {p.relative_to(bundled_site_root()) for p in bundled_site_root().rglob("*") if p.is_file()}
    assert generated == bundled
    stale = [str(p) for p in generated if (tmp_path / "site" / p).read_bytes() != (bundled_site_root() / p).read_bytes()]
    assert not stale, f"run `python -m bot.sample_site.build_site` and commit: {stale}"


# --- facts stay consistent -----------------------------------------------------------------------------------


def _curriculum(crawl: Crawl) -> list[dict]:
    table = _soup(crawl.html["/curriculum/"]).select_one(".kurikulum table")
    rows = []
    for tr in table.select("tbody tr"):
        code, name, sks, semester, kind = (td.get_text(strip=True) for td in tr.find_all("td"))
        rows.append({"code": code, "name": name, "sks": int(sks), "semester": int(semester), "sifat": kind})
    return rows


def _lecturers(crawl: Crawl) -> list[dict]:
    table = _soup(crawl.html["/lecturer-and-staff/"]).select_one(".lecturer-list table")
    rows = []
    for tr in table.select("tbody tr"):
        cells = tr.find_all("td")
        rows.append({
            "name": cells[0].get_text(strip=True), "href": cells[0].a["href"],
            "jabatan_fungsional": cells[1].get_text(strip=True), "bidang": cells[3].get_text(strip=True),
        })
    return rows


def test_curriculum_table_totals_144_sks(crawl: Crawl) -> None:
    rows = _curriculum(crawl)
    assert len(rows) >= 40
    assert len({r["code"] for r in rows}) == len(rows)
    assert sum(r["sks"] for r in rows) == 144
    total_cell = _soup(crawl.html["/curriculum/"]).select_one(".kurikulum tfoot").get_text(" ")
    assert "144" in total_cell
    assert {r["semester"] for r in rows} == set(range(1, 9))
    assert {r["sifat"] for r in rows} == {"Wajib", "Pilihan"}
    assert all(re.fullmatch(r"(IF|UIN)-\d{3}", r["code"]) for r in rows)
    for path in ("/undergraduate-s1/", "/curriculum/"):
        assert "144 SKS" in main_text(crawl.html[path].text())


def test_each_lecturer_has_a_profile_with_the_thesis_fields(crawl: Crawl) -> None:
    lecturers = _lecturers(crawl)
    assert len(lecturers) >= 12
    codes = {r["code"] for r in _curriculum(crawl)}
    emails = set()
    for lec in lecturers:
        res = crawl.html[lec["href"]]
        dl = _soup(res).select_one("dl.lecturer-fields")
        fields = {dt.get_text(strip=True): dd.get_text(" ", strip=True) for dt, dd in zip(
            dl.find_all("dt"), dl.find_all("dd"), strict=True)}
        for key in ("Nama", "NIP", "Jabatan Fungsional", "Bidang Keahlian", "Email", "Pendidikan", "Mata Kuliah"):
            assert fields.get(key), f"{lec['href']}: missing {key}"
        assert fields["Nama"] == lec["name"]
        assert fields["Bidang Keahlian"] == lec["bidang"]
        assert fields["Jabatan Fungsional"] == lec["jabatan_fungsional"]
        assert re.fullmatch(r"[\w.]+@ti\.uin-malang\.ac\.id", fields["Email"])
        emails.add(fields["Email"])
        taught = re.findall(r"(?:IF|UIN)-\d{3}", fields["Mata Kuliah"])
        assert taught and set(taught) <= codes, lec["href"]
    assert len(emails) == len(lecturers)


def test_leaders_labs_communities_and_news(crawl: Crawl) -> None:
    profile = main_text(crawl.html["/undergraduate-s1/"].text())
    assert "Supriyono, M.Kom." in profile and "Shoffin Nahwa Utama, M.T." in profile
    head = _soup(crawl.html["/supriyono-m-kom/"]).select_one("dl.lecturer-fields").get_text(" ")
    assert "Ketua Program Studi" in head

    lecturer_pages = {lec["href"] for lec in _lecturers(crawl)}
    labs = _soup(crawl.html["/laboratorium/"]).select(".lab-list tbody tr")
    assert len(labs) >= 5
    for row in labs:
        lab_href, head_href = (a["href"] for a in row.find_all("a"))
        assert head_href in lecturer_pages
        assert row.find_all("td")[1].get_text(strip=True) in main_text(crawl.html[lab_href].text())

    communities = _soup(crawl.html["/organization-and-community/"]).select(".community-list tbody a")
    assert len(communities) >= 6
    assert {"/fun-java/", "/etho/"} <= {a["href"] for a in communities}
    assert all(a["href"] in crawl.html for a in communities)

    posts = [p for p, res in crawl.html.items() if _soup(res).select_one("article.type-post time[datetime]")]
    assert len(posts) >= 10


def test_site_has_no_tuition_fees(crawl: Crawl) -> None:
    for path, res in crawl.html.items():
        text = main_text(res.text())
        assert not re.search(r"\bUKT\b|uang kuliah tunggal|uang pangkal", text, re.I), path


# --- dev datasets --------------------------------------------------------------------------------------------


def _load(name: str) -> list[dict]:
    lines = (EVAL / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def site_texts(crawl: Crawl) -> dict[str, str]:
    texts = {path: _norm(main_text(res.text())) for path, res in crawl.html.items()}
    texts[PDF] = _norm(pdf_text(crawl.other[PDF].body))
    return texts


def test_retrieval_dataset_schema_and_urls(site_texts: dict[str, str]) -> None:
    items = _load("retrieval.jsonl")
    assert len(items) == 30
    assert len({i["id"] for i in items}) == 30
    by_cat: dict[str, int] = {}
    for item in items:
        assert set(item) >= {"id", "query", "category", "relevant_urls"}
        cat, words = item["category"], len(item["query"].split())
        by_cat[cat] = by_cat.get(cat, 0) + 1
        expected = {"1_kata": 1, "2_kata": 2, "3_kata": 3, "4_kata": 4}.get(cat)
        if expected is not None:
            assert words == expected, item
        else:
            assert cat in ("5plus_kata", "acak") and words >= 5, item
        assert item["relevant_urls"], item
        for url in item["relevant_urls"]:
            assert url.startswith("/") and url in site_texts, (item["id"], url)
    assert by_cat == {c: 5 for c in ("1_kata", "2_kata", "3_kata", "4_kata", "5plus_kata", "acak")}


def test_answers_dataset_schema_and_gold_spans(site_texts: dict[str, str]) -> None:
    items = _load("answers.jsonl")
    assert len(items) >= 40 and len({i["id"] for i in items}) == len(items)
    categories = {"fakta", "prosedur", "daftar", "tidak_terjawab", "lanjutan", "kendala"}
    for item in items:
        assert set(item) >= {"id", "query", "category", "relevant_urls", "reference_answer", "answers",
                             "answerable"}, item
        assert item["category"] in categories and item["reference_answer"], item
        assert isinstance(item["answerable"], bool)
        if not item["answerable"]:
            assert item["answers"] == [] and item["relevant_urls"] == [], item
            continue
        assert item["answers"] and item["relevant_urls"], item
        for url in item["relevant_urls"]:
            assert url.startswith("/") and url in site_texts, (item["id"], url)
        for span in item["answers"]:
            assert any(_norm(span) in site_texts[url] for url in item["relevant_urls"]), (item["id"], span)
        for turn in item.get("conversation", []):
            assert set(turn) == {"role", "text"} and turn["role"] in ("user", "assistant") and turn["text"]
    assert sum(not i["answerable"] for i in items) >= 10
    assert sum(bool(i.get("conversation")) for i in items) >= 6
    assert sum(bool(i.get("constraints")) for i in items) >= 6


_ITEM_KEYS = {"id", "query", "category", "relevant_urls", "reference_answer", "answers", "answerable"}


def _check_item(item: dict, site_texts: dict[str, str], categories: set[str], max_answers: int) -> None:
    """One item of a student-typed set: the fields, the category against answerability, user-only earlier turns
    (answerable or not), an unanswerable item with no gold, and every gold span verbatim on one of the item's pages."""
    assert _ITEM_KEYS <= set(item) <= _ITEM_KEYS | {"conversation"}, item
    assert item["category"] in categories and item["query"].strip() and item["reference_answer"], item
    assert isinstance(item["answerable"], bool)
    assert (item["category"] == "tidak_terjawab") == (not item["answerable"]), item
    for turn in item.get("conversation", ()):
        assert set(turn) == {"role", "text"} and turn["role"] == "user" and turn["text"].strip(), item["id"]
    if not item["answerable"]:
        assert item["answers"] == [] and item["relevant_urls"] == [], item
        return
    assert 1 <= len(item["answers"]) <= max_answers and item["relevant_urls"], item
    for url in item["relevant_urls"]:
        assert url.startswith("/") and url in site_texts, (item["id"], url)
    for span in item["answers"]:
        assert span.strip() and any(_norm(span) in site_texts[url] for url in item["relevant_urls"]), (item["id"], span)


def test_informal_dataset_schema_and_gold_spans(site_texts: dict[str, str]) -> None:
    """informal.jsonl: questions typed as students type on WhatsApp; multi-turn items carry only user turns."""
    items = _load("informal.jsonl")
    assert len({i["id"] for i in items}) == len(items)
    categories = {"fakta", "prosedur", "daftar", "tidak_terjawab", "lanjutan", "kendala"}
    single = [i for i in items if "conversation" not in i]
    multi = [i for i in items if "conversation" in i]
    for item in items:
        _check_item(item, site_texts, categories, max_answers=2)
    for item in single:
        assert re.fullmatch(r"I\d{2,}", item["id"]) and item["category"] != "lanjutan", item
    for item in multi:
        assert re.fullmatch(r"M\d{2,}", item["id"]), item
        assert item["category"] in ("lanjutan", "tidak_terjawab"), item
        assert 1 <= len(item["conversation"]) <= 2, item
    assert len(single) >= 60 and sum(not i["answerable"] for i in single) >= 15
    assert len(multi) >= 15 and sum(not i["answerable"] for i in multi) <= 3


@pytest.mark.parametrize(("name", "single_id", "multi_id"),
                         [("informal_holdout.jsonl", r"H\d{2}", r"HM\d{2}"), ("informal_final.jsonl", r"F\d{2}", r"FM\d{2}")])
def test_blind_sets_schema_and_gold_spans(site_texts: dict[str, str], name: str, single_id: str, multi_id: str) -> None:
    """The blind sets A and B (tests/data/eval/README.md): same format as informal.jsonl, every gold span verbatim on
    one of the item's pages, every multi-turn item answerable and carrying only user turns."""
    items = _load(name)
    assert len({i["id"] for i in items}) == len(items)
    single = [i for i in items if "conversation" not in i]
    multi = [i for i in items if "conversation" in i]
    for item in items:
        _check_item(item, site_texts, {"fakta", "prosedur", "daftar", "tidak_terjawab", "lanjutan"}, max_answers=3)
    assert all(re.fullmatch(single_id, i["id"]) for i in single)
    assert all(re.fullmatch(multi_id, i["id"]) and i["answerable"] for i in multi)
    assert len(single) == 45 and sum(not i["answerable"] for i in single) == 12 and len(multi) == 10


_TURN_KEYS = {"smalltalk": set(), "refuse": set(), "answer": {"answers", "relevant_urls"}, "askback": {"candidates"}}


def test_dialogues_dataset_schema_gold_spans_and_coverage(site_texts: dict[str, str]) -> None:
    """dialogues.jsonl: whole WhatsApp-style chats, each user turn with the kind of reply it expects
    (tests/data/eval/README.md). Gold spans are verbatim on one of the turn's pages, ask-back candidates verbatim
    somewhere on the site, and the set keeps its minimum coverage."""
    dialogues = _load("dialogues.jsonl")
    assert len({d["id"] for d in dialogues}) == len(dialogues)
    whole_site = "\n".join(site_texts.values())
    kinds: dict[str, int] = dict.fromkeys(_TURN_KEYS, 0)
    for dialogue in dialogues:
        assert set(dialogue) == {"id", "turns"} and re.fullmatch(r"D\d{2,}", dialogue["id"]), dialogue
        assert 3 <= len(dialogue["turns"]) <= 6, dialogue["id"]
        for turn in dialogue["turns"]:
            where = (dialogue["id"], turn.get("user"))
            kind = turn.get("expect")
            assert kind in _TURN_KEYS and set(turn) == {"user", "expect"} | _TURN_KEYS[kind], where
            assert isinstance(turn["user"], str) and turn["user"].strip(), where
            kinds[kind] += 1
            if kind == "answer":
                assert 1 <= len(turn["answers"]) <= 2 and turn["relevant_urls"], where
                for url in turn["relevant_urls"]:
                    assert url.startswith("/") and url in site_texts, (*where, url)
                for span in turn["answers"]:
                    assert span.strip() and any(_norm(span) in site_texts[url] for url in turn["relevant_urls"]), (
                        *where, span)
            elif kind == "askback":
                assert 2 <= len(turn["candidates"]) <= 3, where
                for name in turn["candidates"]:
                    assert name.strip() and _norm(name) in whole_site, (*where, name)
    turns = sum(kinds.values())
    assert len(dialogues) >= 40 and kinds["askback"] >= 6, kinds
    assert kinds["smalltalk"] >= 0.35 * turns and kinds["answer"] >= 0.40 * turns, kinds
    assert kinds["refuse"] >= 4, kinds


def test_constraint_questions_match_the_site(crawl: Crawl) -> None:
    courses, lecturers = _curriculum(crawl), _lecturers(crawl)
    checked = 0
    for item in _load("answers.jsonl"):
        constraints = item.get("constraints")
        if not constraints:
            continue
        if set(constraints) <= {"semester", "sks", "sifat"}:
            found = [c["code"] for c in courses if all(c[k] == v for k, v in constraints.items())]
        else:
            assert set(constraints) <= {"bidang", "jabatan_fungsional"}, constraints
            found = [lec["name"] for lec in lecturers if all(lec[k] == v for k, v in constraints.items())]
        assert sorted(found) == sorted(item["expected_items"]), item["id"]
        assert len(found) >= 2
        checked += 1
    assert checked >= 6
