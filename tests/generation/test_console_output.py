"""Nothing the process prints or logs is lost while llama.cpp loads or runs the model.

llama-cpp-python with ``verbose=False`` used to point file descriptors 1 and 2 (and ``sys.stdout``/``sys.stderr``)
at /dev/null for the whole process while it loaded a model: the console chat piped into another program lost its
welcome text and first answers, and ``serve`` lost the log lines other threads wrote meanwhile. Real model, real
pipes, real subprocesses."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

LOADER = textwrap.dedent("""
    import logging, sys, threading, time
    from pathlib import Path
    from generation.llama_backend import LlamaConfig, LlamaGenerator

    model = Path(sys.argv[1])
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
    loaded = threading.Event()
    rounds = int(sys.argv[2])

    def load():
        for _ in range(rounds):  # a few loads make the window long enough to be hit many times
            LlamaGenerator(LlamaConfig(model_path=model, models_dir=model.parent, n_ctx=512)).close()
        loaded.set()

    worker = threading.Thread(target=load)
    worker.start()
    n = 0
    while not loaded.is_set():
        n += 1
        print(f"out {n}")
        sys.stdout.flush()
        logging.getLogger("main").info("log %d", n)
        time.sleep(0.0005)
    worker.join()
    print(f"total {n}", flush=True)
""")


def test_prints_and_log_lines_written_while_the_model_loads_all_arrive(default_model_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", LOADER, str(default_model_path), "3"], capture_output=True,
                            text=True, env=env, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout.splitlines()
    total = int(out[-1].split()[1])
    assert total > 10  # the main thread really wrote during the loads
    assert out[:-1] == [f"out {n}" for n in range(1, total + 1)]
    logged = [line for line in result.stderr.splitlines() if line.startswith("log ")]
    assert logged == [f"log {n}" for n in range(1, total + 1)]


DOCS = [
    {"id": "ketua", "url": "http://prodi.test/profil/ketua", "title": "Ketua Program Studi",
     "text": "Ketua Program Studi Teknik Informatika adalah Dr. Supriyono, M.Kom. Beliau menjabat sejak tahun 2021."},
    {"id": "basis-data", "url": "http://prodi.test/kurikulum/basis-data", "title": "Basis Data",
     "text": "Mata kuliah Basis Data berbobot 3 SKS dan diambil pada semester 3."},
    {"id": "akreditasi", "url": "http://prodi.test/profil/akreditasi", "title": "Akreditasi",
     "text": "Program Studi Teknik Informatika terakreditasi Unggul oleh LAM INFOKOM sejak tahun 2023."},
]
QUESTIONS = [
    "Siapa ketua program studi?",
    "Berapa SKS mata kuliah Basis Data?",
    "Apa akreditasi program studi?",
    "Semester berapa Basis Data diambil?",
    "Sejak kapan ketua prodi menjabat?",
]


def test_five_questions_piped_into_chat_give_five_answers(tmp_path: Path) -> None:
    """``printf '…' | python -m bot chat | cat``: the welcome text and every answer reach the pipe."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in DOCS) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "WHATSAPP_", "SITE_", "REDIS_"))}
    env.update({"DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)})
    built = subprocess.run([sys.executable, "-m", "bot", "index", "--from-jsonl", str(docs), "--json"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    questions = "".join(q + "\n" for q in QUESTIONS)
    shell = f"printf %s {_quote(questions)} | {_quote(sys.executable)} -m bot chat | cat"
    result = subprocess.run(["/bin/sh", "-c", shell], capture_output=True, text=True, env=env, cwd=tmp_path,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert out.startswith("Selamat datang"), out[:500]
    assert len(re.findall(r"^Bot> ", out, flags=re.M)) == 5, out
    assert out.rstrip().endswith("Sampai jumpa!")
    assert "Supriyono" in out and "3 SKS" in out
    assert "Traceback" not in result.stderr
    # INFO log lines went to the log file, not into the chat
    assert " INFO " not in out and " INFO " not in result.stderr
    log_file = tmp_path / "data" / "logs" / "prodi-bot.log"
    assert log_file.exists() and all(json.loads(line)["ts"] for line in log_file.read_text().splitlines())


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
