"""DATABASE_URL selects PostgreSQL for every shared store in bot.wiring; unset, the SQLite files stay as they were.
A real reindex with a PostgreSQL serving store: it crawls into a local staging copy and swaps it into PostgreSQL,
with the admin answers from PostgreSQL in the index, and no store file appears in DATA_DIR."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot import wiring
from storage.docstore import DocumentStore
from storage.insights import InsightsStore
from storage.pg_stores import PgDocumentStore, PgInsightsStore, PgRunStore
from storage.runs import RunStore
from tests.auxil.postgres import fresh_schema
from tests.auxil.reindex_site import ops_settings


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_schema() as (url, _name):
        yield url


def test_without_database_url_the_stores_are_the_sqlite_files(data_dir) -> None:
    settings = ops_settings(data_dir, "http://127.0.0.1:9/")
    assert settings.database_url is None and wiring.shared_database(settings) is None
    with wiring.open_docstore(settings) as docs:
        assert isinstance(docs, DocumentStore)
    assert isinstance(wiring.build_run_store(settings), RunStore)
    insights = wiring.open_insights_store(settings)
    assert isinstance(insights, InsightsStore)
    insights.close()
    assert (data_dir / "prodi.sqlite3").exists() and (data_dir / "insights.sqlite3").exists()


def test_a_bad_database_url_names_the_variable_without_echoing_it(data_dir) -> None:
    from bot.settings import SettingsError

    with pytest.raises(SettingsError) as raised:
        ops_settings(data_dir, "http://127.0.0.1:9/", database_url="mysql://bot:hunter2@db/prodi")
    assert "DATABASE_URL" in str(raised.value) and "hunter2" not in str(raised.value)


async def test_a_reindex_with_the_stores_in_postgresql(mini_site, data_dir, pg_url) -> None:
    for i in range(4):
        mini_site.set_page(f"/halaman-{i}/", f"Halaman {i}", [f"Informasi akademik nomor {i} untuk mahasiswa."])
    settings = ops_settings(data_dir, mini_site.base_url, database_url=pg_url)
    insights = wiring.open_insights_store(settings)
    assert isinstance(insights, PgInsightsStore)
    insights.save_answer(question="Kapan wisuda?", answer="Wisuda tanggal 20 Juli.", author="ani")

    job = wiring.build_reindex_job(settings)
    assert isinstance(job.runs, PgRunStore)
    first = await job.run("cli")
    assert first.status == "SUCCESS", first.error
    with wiring.open_docstore(settings) as docs:
        assert isinstance(docs, PgDocumentStore)
        urls = sorted(d.url for d in docs.documents())
        assert urls == sorted([f"{mini_site.base_url}/"] + [f"{mini_site.base_url}/halaman-{i}/" for i in range(4)])
        assert docs.counts()["pages"] == 5 and docs.last_changes().added
    assert job.runs.get(first.run_id).status == "SUCCESS" and job.runs.logs(first.run_id)
    manager = job.index_manager
    manager.reload_if_changed()
    assert any(c.doc_id == "admin-answer-1" for c in manager.current().chunks)  # the answer saved in PostgreSQL

    mini_site.set_page("/halaman-1/", "Halaman 1", ["Informasi akademik yang sudah diperbarui untuk mahasiswa."])
    second = await job.run("cli")
    assert second.status == "SUCCESS", second.error
    with wiring.open_docstore(settings) as docs:
        changes = docs.last_changes()
        assert f"{mini_site.base_url}/halaman-1/" in {docs.document(d).url for d in changes.changed}
        assert "diperbarui" in " ".join(c.text for c in docs.chunks())
    assert not (data_dir / "prodi.sqlite3").exists() and not (data_dir / "runs.sqlite3").exists()
    assert not (data_dir / "insights.sqlite3").exists()
    assert list((data_dir / "staging").glob("docstore-*")) == []


def test_a_first_index_on_a_new_host_is_fetched_not_built(data_dir, tmp_path, pg_url) -> None:
    """`chat`/`ask` on a host with an empty DATA_DIR (ensure_index): the version another host published is fetched,
    nothing is crawled (the site is unreachable) and no run is recorded."""
    from tests.retrieval.conftest import corpus_chunks, corpus_documents

    other = ops_settings(tmp_path / "other", "http://127.0.0.1:9/", database_url=pg_url)
    published = wiring.build_index_manager(other).build(corpus_chunks(), corpus_documents())
    here = ops_settings(data_dir, "http://127.0.0.1:9/", database_url=pg_url)
    wiring.ensure_index(here)
    manager = wiring.build_index_manager(here)
    assert manager.current_version() == published.version and len(manager.current()) == published.total
    assert wiring.build_run_store(here).recent(5) == []
