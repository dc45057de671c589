"""`python -m bot crawl --json` and `python -m bot docs [--chunks] --json` end to end on the sample site."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # CLI subprocesses crawling the sample site

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env}, cwd=cwd)


def test_crawl_and_docs_commands(sample_site: str, tmp_path: Path) -> None:
    env = {"DATA_DIR": str(tmp_path / "data"), "CRAWL_ALLOW_PRIVATE_NETWORKS": "true", "CRAWL_DELAY_SECONDS": "0",
           "SITE_SEEDS": ""}
    crawl = run("crawl", "--seed", sample_site + "/", "--max-pages", "500", "--json", env=env, cwd=tmp_path)
    assert crawl.returncode == 0, crawl.stderr
    report = json.loads(crawl.stdout)
    assert set(report) == {"pages", "duration_s", "errors"}
    assert report["pages"]["fetched"] == report["pages"]["changed"] > 50 and report["pages"]["skipped"] > 0

    docs = run("docs", "--json", env=env, cwd=tmp_path)
    rows = [json.loads(line) for line in docs.stdout.splitlines()]
    assert docs.returncode == 0 and len(rows) > 50
    assert {"doc_id", "chunk_id", "url", "title", "section", "text"} <= set(rows[0])

    chunks = run("docs", "--chunks", "--json", env=env, cwd=tmp_path)
    rows = [json.loads(line) for line in chunks.stdout.splitlines()]
    assert rows and all(set(r) == {"doc_id", "chunk_id", "url", "title", "section", "text"} for r in rows)
    assert all(r["chunk_id"] and r["text"] for r in rows)

    again = run("crawl", "--seed", sample_site + "/", "--json", env=env, cwd=tmp_path)
    assert json.loads(again.stdout)["pages"]["changed"] == 0


def test_private_seed_without_permission_fails_cleanly(sample_site: str, tmp_path: Path) -> None:
    env = {"DATA_DIR": str(tmp_path / "data"), "CRAWL_ALLOW_PRIVATE_NETWORKS": "false", "CRAWL_RETRIES": "0"}
    result = run("crawl", "--seed", sample_site + "/", "--json", env=env, cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "site unreachable" in json.loads(result.stdout)["errors"][0]
