"""Incremental state on a mutable copy of the sample site: unchanged re-crawl changes nothing, a changed page
replaces only its own chunks, a page missing twice is removed, a transient error removes nothing, a site that
is down leaves the store untouched, robots.txt is honoured."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from storage.docstore import DocumentStore
from sync_jobs.crawl import crawl_site
from tests.sync_jobs.test_crawl_sample_site import config_for

pytestmark = pytest.mark.slow  # crawls the sample site twice


@pytest.fixture
def store(data_dir):
    s = DocumentStore(data_dir / "prodi.sqlite3")
    yield s
    s.close()


def _snapshot(store: DocumentStore) -> tuple[dict, dict]:
    return ({d.doc_id: d.content_hash for d in store.documents()},
            {c.chunk_id: c.doc_id for c in store.chunks()})


async def test_unchanged_recrawl_then_one_changed_page(mutable_sample_site, store) -> None:
    site = mutable_sample_site
    config = config_for(site.base_url)
    first = await crawl_site(config, store)
    assert first.ok and first.changed > 50
    docs, chunks = _snapshot(store)

    second = await crawl_site(config, store)
    assert second.changed == 0 and second.unchanged == first.fetched and second.removed == 0
    assert second.changes.touched == () and second.changes.removed == () and second.changes.chunks_added == 0
    assert _snapshot(store) == (docs, chunks)

    page = site.root / "faq" / "index.html"
    html = page.read_text(encoding="utf-8")
    marker = '<div class="entry-content clear" itemprop="text">'
    assert marker in html
    page.write_text(html.replace(marker, marker + "<p>Informasi baru: wisuda gelombang III diadakan Desember.</p>", 1),
                    encoding="utf-8")
    third = await crawl_site(config, store)
    assert third.changed == 1 and third.changed_urls == [site.base_url + "/faq/"]
    assert len(third.changes.changed) == 1 and third.changes.added == () and third.changes.removed == ()
    faq_id = third.changes.changed[0]
    new_docs, new_chunks = _snapshot(store)
    assert {k for k in new_docs if new_docs[k] != docs.get(k)} == {faq_id}
    assert {c for c in chunks if c not in new_chunks} <= {c for c, d in chunks.items() if d == faq_id}
    assert {d for c, d in new_chunks.items() if c not in chunks} == {faq_id}
    assert any("wisuda gelombang III" in c.text for c in store.chunks([faq_id]))


@pytest.mark.faults
@pytest.mark.faults
async def test_missing_twice_is_removed_and_transient_error_removes_nothing(mutable_sample_site, store) -> None:
    site = mutable_sample_site
    config = config_for(site.base_url)
    await crawl_site(config, store)
    faq = site.base_url + "/faq/"
    etho = site.base_url + "/etho/"
    assert any(d.url == faq for d in store.documents())

    shutil.rmtree(site.root / "faq")
    manifest = site.root / "_site.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["forbidden"] = [*data.get("forbidden", []), "/etho/"]  # 403: a firewall's mood, not a deletion
    manifest.write_text(json.dumps(data), encoding="utf-8")

    once = await crawl_site(config, store)
    assert once.removed == 0 and once.skipped_urls[faq] == "HTTP 404" and etho in once.failed_urls
    assert any(d.url == faq for d in store.documents()), "one miss removes nothing"
    assert once.changes.removed == ()

    twice = await crawl_site(config, store)
    assert twice.removed == 1 and twice.removed_urls == [faq]
    assert not any(d.url == faq for d in store.documents())
    assert not any(c.url == faq for c in store.chunks())
    assert len(twice.changes.removed) == 1
    assert any(d.url == etho for d in store.documents()), "a transient error never removes"


@pytest.mark.faults
@pytest.mark.faults
async def test_site_down_fails_and_leaves_store_untouched(mutable_sample_site, store) -> None:
    site = mutable_sample_site
    config = config_for(site.base_url)
    await crawl_site(config, store)
    before = _snapshot(store)
    states = store.page_states()
    crawl_id = store.last_crawl_id()
    site.set_down(True)
    report = await crawl_site(config, store)
    assert not report.ok and report.site_down and report.removed == 0
    # every request answers 503, robots.txt included: RFC 9309 says fetch nothing, and the error says why
    assert report.errors[0].startswith("robots.txt returned HTTP 5xx") and "503" in report.errors[0]
    assert _snapshot(store) == before and store.page_states() == states and store.last_crawl_id() == crawl_id
    site.set_down(False)
    site.stop()
    report = await crawl_site(config, store)
    assert report.site_down and _snapshot(store) == before


async def test_robots_txt_disallow_is_honoured(mutable_sample_site, store) -> None:
    site = mutable_sample_site
    robots = site.root / "robots.txt"
    robots.write_text(robots.read_text(encoding="utf-8").replace("Disallow: /wp-admin/", "Disallow: /wp-admin/\nDisallow: /faq/"),
                      encoding="utf-8")
    report = await crawl_site(config_for(site.base_url), store)
    assert report.skipped_urls[site.base_url + "/faq/"] == "disallowed by robots.txt"
    assert not any(re.search(r"/faq/$", d.url) for d in store.documents())
