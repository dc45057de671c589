"""`make run` is `python -m bot chat` on a fresh DATA_DIR: with no tokens, no Redis, no SITE_SEEDS and no network it
builds its first index from the bundled sample site (served on a free loopback port by the process itself, stored
under the demo's fake public origin) and answers with sources. This is the whole embedded default, end to end, with
the real model."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from bot.wiring import DEMO_ORIGIN

pytestmark = pytest.mark.slow  # `python -m bot chat` end to end: a subprocess crawling and indexing


@pytest.mark.integration
def test_console_chat_bootstraps_from_the_sample_site(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "WHATSAPP_", "SITE_", "REDIS_")) and k != "DEMO"}
    env["DATA_DIR"] = str(tmp_path / "data")
    result = subprocess.run(
        [sys.executable, "-m", "bot", "chat"],
        input="Siapa ketua program studi Teknik Informatika?\n/sumber\n/keluar\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "Supriyono" in out
    assert DEMO_ORIGIN + "/" in out  # every answer cites its pages on the demo site's fixed public origin
    assert "127.0.0.1" not in out
    assert "Traceback" not in result.stderr
    # The first run built an index that the next run reuses, and recorded the run like any reindex.
    status = subprocess.run(
        [sys.executable, "-m", "bot", "status", "--json"], capture_output=True, text=True, env=env, cwd=tmp_path,
        timeout=120,
    )
    assert '"status": "SUCCESS"' in status.stdout
    assert '"trigger": "cli"' in status.stdout


def test_a_failed_first_index_is_a_clear_message_not_a_traceback(tmp_path: Path) -> None:
    """SITE_SEEDS set but the site is down on the first `ask`: the command says why and how to retry."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again below: nothing listens there
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "WHATSAPP_", "SITE_", "REDIS_"))}
    env.update({"DATA_DIR": str(tmp_path / "data"), "SITE_SEEDS": f"http://127.0.0.1:{port}/",
                "CRAWL_ALLOW_PRIVATE_NETWORKS": "true", "CRAWL_RETRIES": "0", "CRAWL_TIMEOUT_SECONDS": "2"})
    result = subprocess.run([sys.executable, "-m", "bot", "ask", "Siapa ketua prodi?"], capture_output=True,
                            text=True, env=env, cwd=tmp_path, timeout=300)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "FAILED" in result.stderr and "python -m bot reindex" in result.stderr


# torch is a training dependency only: `make run` installs without it. The dev environment has it, so the console
# chat runs here with torch made unimportable, as on a machine where only `make run` installed.
_WITHOUT_TORCH = ("import runpy, sys; sys.modules['torch'] = None; "
                  "runpy.run_module('bot', run_name='__main__', alter_sys=True)")


@pytest.mark.integration
def test_console_chat_answers_its_first_question_without_torch(tmp_path: Path) -> None:
    """The question has one clear answer on the sample site (the curriculum's total; the reader's selector 0.76, the
    next chunk 0.20). "Berapa SKS total untuk lulus S1 Teknik Informatika?" was asked here before. Its top two chunks
    tie within 0.01 in the search, and the same commit that passed on the previous session's machine answered the
    thesis prerequisite "120 SKS" on the next one (2026-11-28; the onnx, onnxruntime and numpy versions were ruled
    out). The machine must not decide whether this test passes; that question is the reader's limit
    (docs/answers.md)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TELEGRAM_", "WHATSAPP_", "SITE_", "REDIS_", "ANSWERER")) and k != "DEMO"}
    env["DATA_DIR"] = str(tmp_path / "data")
    result = subprocess.run(
        [sys.executable, "-c", _WITHOUT_TORCH, "chat"],
        input="Berapa jumlah SKS kurikulum Teknik Informatika?\n/keluar\n",
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "144" in result.stdout  # the default answerer (the learned reader, onnxruntime) found the total
    assert "Traceback" not in result.stderr and "torch" not in result.stderr
