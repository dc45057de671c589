"""``python -m bot runs [--last N] [--json]`` and ``runs show RUN_ID``: the run views for maintainers on SSH."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from storage.runs import RunStore
from tests.bot.test_run_views import seed_failed_run

pytestmark = pytest.mark.slow  # a CLI subprocess per test


def _runs(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATA_DIR": str(data_dir), "TIMEZONE": "Asia/Jakarta"}
    return subprocess.run([sys.executable, "-m", "bot", "runs", *args], capture_output=True, text=True, env=env,
                          cwd=data_dir.parent, timeout=120)


def _seed(data_dir: Path) -> tuple[str, str]:
    store = RunStore(data_dir / "runs.sqlite3")
    ok = store.start("schedule")
    store.log(ok.run_id, {"stage": "crawl", "duration_s": 12.5, "pages_fetched": 70})
    store.finish(ok.run_id, "SUCCESS", pages_fetched=70, chunks_total=480, index_version="v1")
    return ok.run_id, seed_failed_run(store)


def test_runs_lists_the_newest_first_with_a_failed_runs_error(data_dir: Path) -> None:
    ok, failed = _seed(data_dir)
    result = _runs(data_dir)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["PROSES", "STATUS", "PEMICU"]
    assert failed in lines[1] and "Gagal" in lines[1] and "WIB" in lines[1]
    assert "27%" in lines[2]  # the error, under its run
    assert ok in lines[3] and "Berhasil" in lines[3] and "70" in lines[3]
    assert result.stderr == ""


def test_runs_json_and_last(data_dir: Path) -> None:
    ok, failed = _seed(data_dir)
    every = json.loads(_runs(data_dir, "--json").stdout)
    assert [r["run_id"] for r in every] == [failed, ok]
    assert every[0]["status"] == "FAILED" and "27%" in every[0]["error"]
    last = json.loads(_runs(data_dir, "--last", "1", "--json").stdout)
    assert [r["run_id"] for r in last] == [failed]


def test_runs_show_a_failed_run(data_dir: Path) -> None:
    _, failed = _seed(data_dir)
    result = _runs(data_dir, "show", failed)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"Proses {failed}: Gagal" in out
    assert "Keterangan:" in out and "3 of 11 pages failed" in out
    assert "Perayapan & ekstraksi" in out and "4,2 s" in out
    assert "Porsi halaman gagal: batas ≤ 20%, terukur 27% - GAGAL" in out
    assert "https://prodi.example.ac.id/akademik/  HTTP 503" in out and "percobaan ulang: 2" in out
    assert "Ditambah (1)" in out and "https://prodi.example.ac.id/berita/baru/" in out

    data = json.loads(_runs(data_dir, "show", failed, "--json").stdout)
    assert data["run"]["status"] == "FAILED" and data["run"]["error"].startswith("3 of 11")
    assert data["failed_pages"][0]["status"] == 503
    assert {s["name"]: s["status"] for s in data["stages"]}["validate"] == "failed"


def test_runs_show_an_unknown_run_says_so(data_dir: Path) -> None:
    _seed(data_dir)
    result = _runs(data_dir, "show", "20990101T000000Z-nothere")
    assert result.returncode == 1
    assert "no run" in result.stderr and "python -m bot runs" in result.stderr
    assert "Traceback" not in result.stderr
    empty = _runs(data_dir.parent / "other-data")
    assert empty.returncode == 0 and "Belum ada proses" in empty.stdout
