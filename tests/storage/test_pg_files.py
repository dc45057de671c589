"""storage.pg_files on the real PostgreSQL (a schema per test): a small file published by one host is fetched by
another (sha256 checked, written beside the target and renamed); a row whose bytes do not match its checksum is
refused with an error naming the file, and the file already there stays as it was."""

from __future__ import annotations

import pytest

from storage.pg_files import PgFileStore, SharedFileError
from tests.auxil.postgres import fresh_database

pytestmark = pytest.mark.postgres

NAME = "calibration/abstention.json"


@pytest.fixture
def store():
    with fresh_database() as db:
        yield PgFileStore(db)


def test_a_published_file_is_fetched_once_and_again_when_it_changes(tmp_path, store) -> None:
    source = tmp_path / "a" / "abstention.json"
    source.parent.mkdir()
    source.write_text('{"threshold": 0.4}\n', encoding="utf-8")
    digest = store.publish(NAME, source)
    assert store.digests([NAME]) == {NAME: digest}
    target = tmp_path / "b" / "calibration" / "abstention.json"  # an empty DATA_DIR: not even the directory
    result = store.sync({NAME: target, "calibration/reader.json": tmp_path / "b" / "calibration" / "reader.json"})
    assert result.changed == [NAME] and result.errors == []
    assert target.read_bytes() == source.read_bytes()
    assert not (tmp_path / "b" / "calibration" / "reader.json").exists()  # never published: nothing written
    assert store.sync({NAME: target}).changed == []  # same sha256 here: nothing fetched
    source.write_text('{"threshold": 0.55}\n', encoding="utf-8")
    store.publish(NAME, source)  # a second publish replaces the row
    assert store.sync({NAME: target}).changed == [NAME] and target.read_bytes() == source.read_bytes()
    assert sorted(p.name for p in target.parent.iterdir()) == ["abstention.json"]  # no temporary file left


def test_a_corrupted_row_is_refused_and_the_file_here_stays(tmp_path, store) -> None:
    source = tmp_path / "abstention.json"
    source.write_text('{"threshold": 0.4}\n', encoding="utf-8")
    store.publish(NAME, source)
    target = tmp_path / "b" / "abstention.json"
    target.parent.mkdir()
    target.write_text('{"threshold": 0.3}\n', encoding="utf-8")
    store.db.write("corrupting", lambda conn: conn.execute(
        "UPDATE shared_files SET data = %s WHERE name = %s", (b'{"threshold": 0.9}\n', NAME)), repeatable=True)
    with pytest.raises(SharedFileError) as raised:
        store.fetch(NAME, target)
    message = str(raised.value)
    assert NAME in message and "sha256" in message and "kept" in message
    assert target.read_text(encoding="utf-8") == '{"threshold": 0.3}\n'
    result = store.sync({NAME: target})  # the sync reports it and goes on
    assert result.changed == [] and len(result.errors) == 1 and NAME in result.errors[0]
    assert target.read_text(encoding="utf-8") == '{"threshold": 0.3}\n'
    assert sorted(p.name for p in target.parent.iterdir()) == ["abstention.json"]


def test_unsafe_names_are_refused(tmp_path, store) -> None:
    source = tmp_path / "x.json"
    source.write_text("{}", encoding="utf-8")
    for name in ("../x.json", "/etc/x", ""):
        with pytest.raises(SharedFileError):
            store.publish(name, source)
