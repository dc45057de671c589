"""Progress bars on a terminal, and nothing extra otherwise: ``reindex`` and ``crawl`` in a pseudo-terminal (pty)
draw a bar per stage (pages, chunks embedded, ETA); with ``--json`` or a pipe they print only their result."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # CLI subprocesses on a pseudo-terminal, crawling and indexing

ROOT = Path(__file__).resolve().parents[2]


def _env(data_dir: Path, site: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "WHATSAPP_", "SITE_", "REDIS_"))}
    env.update({"DATA_DIR": str(data_dir), "SITE_SEEDS": site.rstrip("/") + "/", "CRAWL_ALLOW_PRIVATE_NETWORKS": "true",
                "CRAWL_DELAY_SECONDS": "0", "CRAWL_RETRIES": "0", "PYTHONPATH": str(ROOT), "COLUMNS": "100",
                "TERM": "xterm"})
    return env


def in_pty(args: list[str], env: dict[str, str], cwd: Path, timeout: float = 600,
           typed: str = "") -> tuple[int, str]:
    """Run ``python -m bot ARGS`` with stdin, stdout and stderr on a pseudo-terminal; return (exit code, output).
    ``typed`` is typed at the terminal at once (the terminal keeps it until the program reads)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "bot", *args], stdin=slave, stdout=slave, stderr=slave, env=env,
                            cwd=cwd, close_fds=True)
    os.close(slave)
    if typed:
        os.write(master, typed.encode())
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return code, b"".join(chunks).decode("utf-8", errors="replace")


def test_reindex_on_a_terminal_shows_progress_bars(sample_site, warm_data_dir, tmp_path) -> None:
    code, out = in_pty(["reindex"], _env(warm_data_dir, sample_site), tmp_path)
    assert code == 0, out[-3000:]
    assert "Perayapan:" in out and "halaman" in out and "%|" in out  # a tqdm bar: "Perayapan: 100%|███| 70/70"
    assert "Embedding:" in out and "potongan" in out
    assert "Pembaruan indeks selesai" in out  # the summary after the bars
    assert " INFO " not in out  # log lines go to the log file


def test_reindex_json_on_a_terminal_prints_only_json(sample_site, warm_data_dir, tmp_path) -> None:
    code, out = in_pty(["reindex", "--json"], _env(warm_data_dir, sample_site), tmp_path)
    assert code == 0, out[-3000:]
    lines = [line for line in out.replace("\r", "").splitlines() if line.strip()]
    assert len(lines) == 1, out[-3000:]
    assert json.loads(lines[0])["status"] == "SUCCESS"


def test_crawl_draws_a_bar_on_a_terminal_and_nothing_extra_in_a_pipe(sample_site, data_dir, tmp_path) -> None:
    env = _env(data_dir, sample_site)
    code, out = in_pty(["crawl"], env, tmp_path)
    assert code == 0, out[-3000:]
    assert "Perayapan:" in out and "%|" in out and "Crawl done" in out
    piped = subprocess.run([sys.executable, "-m", "bot", "crawl"], capture_output=True, text=True, env=env, cwd=tmp_path,
                           timeout=300)
    assert piped.returncode == 0, piped.stderr[-2000:]
    assert piped.stdout.startswith("Crawl done") and "%|" not in piped.stdout + piped.stderr
    assert " INFO " not in piped.stderr


@pytest.mark.integration
def test_first_chat_on_a_fresh_data_dir_shows_a_bar_then_a_quiet_chat(tmp_path) -> None:
    """``make run``: the first index is built with progress bars; afterwards no log line lands in the chat."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "WHATSAPP_", "SITE_", "REDIS_")) and k != "DEMO"}
    env.update({"DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT), "TERM": "xterm"})
    code, out = in_pty(["chat"], env, tmp_path, timeout=900,
                       typed="Siapa ketua program studi Teknik Informatika?\n/keluar\n")
    assert code == 0, out[-3000:]
    before, welcome, after = out.partition("Selamat datang")
    assert welcome, out[-3000:]
    assert "Perayapan:" in before and "Embedding:" in before and "%|" in before
    assert "Bot> " in after and "Supriyono" in after
    for noise in (" INFO ", " WARNING ", "llama_", '"level"', "Traceback"):
        assert noise not in after, after
    log_file = tmp_path / "data" / "logs" / "prodi-bot.log"
    stages = [json.loads(line).get("stage") for line in log_file.read_text(encoding="utf-8").splitlines()]
    assert "crawl" in stages and "embed" in stages  # the job's INFO lines are in the log file instead


def test_index_draws_an_embedding_bar_on_a_terminal(data_dir, tmp_path) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(json.dumps({"id": f"d{i}", "url": f"http://prodi.test/{i}", "title": f"Halaman {i}",
                                          "text": f"Informasi akademik nomor {i} untuk mahasiswa baru."})
                              for i in range(5)) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SITE_", "REDIS_"))}
    env.update({"DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)})
    code, out = in_pty(["index", "--from-jsonl", str(docs)], env, tmp_path)
    assert code == 0, out[-3000:]
    assert "Embedding:" in out and "5/5" in out and "Membangun indeks" in out and "index v" in out
    code, out = in_pty(["index", "--from-jsonl", str(docs), "--json"], env, tmp_path)
    assert code == 0 and [json.loads(line) for line in out.splitlines() if line.strip()][0]["documents"] == 5
