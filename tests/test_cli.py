"""The CLI contract: every subcommand is listed, bad settings give one clear error, not a traceback."""

from __future__ import annotations

import subprocess
import sys

from bot.cli import COMMANDS, build_parser

EXPECTED = {"chat", "serve", "crawl", "index", "reindex", "search", "ask", "eval", "sample-site", "docs", "status"}


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
