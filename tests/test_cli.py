"""The CLI contract: every subcommand is listed, bad settings give one clear error, not a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bot.cli import COMMANDS, build_parser

pytestmark = pytest.mark.slow  # a CLI subprocess per test

EXPECTED = {"chat", "serve", "crawl", "index", "reindex", "search", "ask", "eval", "calibrate", "sample-site", "docs",
            "status", "runs", "insights", "migrate-store", "announcements"}


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: str | None = None) -> subprocess.CompletedProcess:
    import os

    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], capture_output=True, text=True, env=full_env, cwd=cwd, timeout=120
    )


def test_help_lists_every_subcommand() -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    for name in EXPECTED:
        assert name in result.stdout
    assert set(COMMANDS) == EXPECTED


def test_every_subcommand_has_json_flag() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, subparser in sub.choices.items():
        assert any("--json" in a.option_strings for a in subparser._actions), name


def test_invalid_setting_names_the_variable(tmp_path) -> None:
    result = run_cli("status", env={"HTTP_PORT": "not-a-port", "DATA_DIR": str(tmp_path)}, cwd=str(tmp_path))
    assert result.returncode == 2
    assert "HTTP_PORT" in result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_secret_is_not_echoed(tmp_path) -> None:
    result = run_cli(
        "status", env={"LLM_BACKEND": "openai", "LLM_ENDPOINT": "", "DATA_DIR": str(tmp_path)}, cwd=str(tmp_path)
    )
    assert result.returncode == 2
    assert "LLM_ENDPOINT" in result.stderr
    assert "Traceback" not in result.stderr


def test_output_into_a_closed_pipe_is_not_a_traceback(tmp_path) -> None:
    """`python -m bot docs --chunks --json | head`: the reader leaving early ends the command quietly."""
    import os

    from storage.docstore import DocumentStore
    from storage.models import Chunk, Document

    docs = [Document(doc_id=f"d{i}", url=f"http://x.test/{i}/", title=f"T{i}", text="isi " * 50, content_hash=f"h{i}")
            for i in range(300)]
    chunks = [Chunk(chunk_id=f"c{i}", doc_id=f"d{i}", url=f"http://x.test/{i}/", title=f"T{i}", section="S",
                    position=0, text="isi halaman " * 40, content_hash=f"h{i}") for i in range(300)]
    with DocumentStore(tmp_path / "prodi.sqlite3") as store:
        store.sync_documents(docs, {c.doc_id: [c] for c in chunks})
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "docs", "--chunks", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "DATA_DIR": str(tmp_path)}, cwd=tmp_path,
    )
    assert proc.stdout.read(10)  # read a little, then leave like `head` does
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert b"Traceback" not in err and b"BrokenPipeError" not in err
    assert proc.returncode == 0


def test_ask_and_search_refuse_a_text_over_the_question_cap(tmp_path) -> None:
    env = {"DATA_DIR": str(tmp_path), "MAX_QUESTION_CHARS": "50"}
    for command in (("ask", "k" * 51), ("search", "k" * 51)):
        result = run_cli(*command, "--json", env=env, cwd=str(tmp_path))
        assert result.returncode == 2, result.stderr
        assert "51 characters" in result.stderr and "MAX_QUESTION_CHARS" in result.stderr
        assert "Traceback" not in result.stderr
