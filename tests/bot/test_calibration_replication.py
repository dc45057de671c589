"""The site's calibration travels between hosts with DATABASE_URL (issue 31): what `python -m bot calibrate` writes
to DATA_DIR/calibration/ on one host is published to PostgreSQL (a schema of the test's own); a host with an empty
DATA_DIR builds its pipeline with it, and a running pipeline takes a newer one at the index watcher's sync, without
a restart. Without DATABASE_URL nothing is published or fetched."""

from __future__ import annotations

import dataclasses
import logging
from types import SimpleNamespace

import pytest

from bot import wiring
from generation.calibration import DEFAULT_MODEL_PATH, Calibrator, OperatingPoint
from generation.reader.site import save_threshold
from tests.auxil.postgres import fresh_schema
from tests.auxil.reindex_site import ops_settings

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_url():
    with fresh_schema() as (url, _name):
        yield url


def _no_index():
    """An IndexManager stand-in with no index and no shared version store (the index side is not under test)."""
    return SimpleNamespace(current=lambda: None, embedder=None, store=None, reload_if_changed=lambda: False,
                           current_version=lambda: None, root=None)


def _calibrate(settings, threshold: float) -> None:
    """What `calibrate` leaves behind: the abstention model and the reader threshold, saved and published."""
    model = dataclasses.replace(Calibrator.load(DEFAULT_MODEL_PATH), threshold=threshold)
    model.save(settings.calibration_path)
    save_threshold(settings.reader_calibration_path, OperatingPoint(threshold, 0.0, 0.0, 0.0, 0.0),
                   {"items": 3})
    for path in (settings.calibration_path, settings.reader_calibration_path):
        wiring.publish_calibration(settings, path)


async def test_a_second_host_gets_the_calibration_at_start_and_follows_a_newer_one(tmp_path, pg_url, caplog):
    a = ops_settings(tmp_path / "a", "http://127.0.0.1:9/", database_url=pg_url)
    b = ops_settings(tmp_path / "b", "http://127.0.0.1:9/", database_url=pg_url)
    bundled = Calibrator.load(DEFAULT_MODEL_PATH).threshold
    _calibrate(a, 0.123)
    assert not b.calibration_path.exists()  # an empty DATA_DIR
    pipeline = wiring.build_pipeline(b, index_manager=_no_index(), pool=object())
    assert pipeline.calibrator.threshold == pytest.approx(0.123) != pytest.approx(bundled)
    assert pipeline.config.reader_threshold == pytest.approx(0.123)
    assert b.calibration_path.read_bytes() == a.calibration_path.read_bytes()

    follower = wiring.CalibrationFollower(b, pipeline)
    watcher = wiring.build_index_watcher(b, _no_index(), calibration=follower)
    caplog.set_level(logging.INFO, logger="bot.wiring")
    assert await watcher.check() is False  # nothing new: nothing swapped, nothing logged
    assert not [r for r in caplog.records if r.name == "bot.wiring" and "calibration" in r.getMessage()]
    before = pipeline.config

    _calibrate(a, 0.456)  # calibrate again on host A
    assert await watcher.check() is False  # the index did not change; the calibration did
    assert pipeline.calibrator.threshold == pytest.approx(0.456)
    assert pipeline.config.reader_threshold == pytest.approx(0.456)
    assert dataclasses.replace(pipeline.config, reader_threshold=before.reader_threshold) == before  # only that
    lines = [r for r in caplog.records if r.name == "bot.wiring" and "calibration" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.INFO, [r.getMessage() for r in lines]
    assert "abstention.json" in lines[0].getMessage() and "reader.json" in lines[0].getMessage()

    # `calibrate` on B's own host: the file here is already the published one, and the running pipeline takes it
    _calibrate(b, 0.789)
    assert await watcher.check() is False
    assert pipeline.calibrator.threshold == pytest.approx(0.789)
    assert pipeline.config.reader_threshold == pytest.approx(0.789)
    assert await watcher.check() is False  # and only once
    assert len([r for r in caplog.records if r.name == "bot.wiring" and "calibration" in r.getMessage()]) == 2


def test_without_database_url_nothing_travels(tmp_path):
    settings = ops_settings(tmp_path / "a", "http://127.0.0.1:9/")
    assert settings.database_url is None
    assert wiring.fetch_shared_calibration(settings) == []
    Calibrator.load(DEFAULT_MODEL_PATH).save(settings.calibration_path)
    assert wiring.publish_calibration(settings, settings.calibration_path) is None
