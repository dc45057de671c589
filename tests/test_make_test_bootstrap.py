"""`make test` brings what the suite needs from the machine (.ci/test-env): a throwaway Redis and a throwaway
PostgreSQL when none answers (stopped afterwards), and one clear line naming what it could not install."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".ci" / "test-env"


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again: nothing listens there


def _answers(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.redis  # it starts a redis-server of its own
def test_without_a_redis_the_command_gets_a_throwaway_one_that_is_stopped_afterwards(tmp_path) -> None:
    dead = _dead_port()
    probe = ("import os, redis; url = os.environ['REDIS_URL']; r = redis.Redis.from_url(url, socket_timeout=5); "
             "r.set('k', 'v'); assert r.get('k') == b'v'; print(url)")
    result = subprocess.run([str(SCRIPT), sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "REDIS_URL": f"redis://127.0.0.1:{dead}",
                                 "TEST_ENV_INSTALL": "never"}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    url = result.stdout.strip()
    port = int(url.rsplit(":", 1)[1])
    assert port != dead and "throwaway redis-server" in result.stderr
    assert not _answers(port)  # stopped when the command ended


@pytest.mark.postgres  # it starts a PostgreSQL of its own
def test_without_a_postgresql_the_command_gets_a_throwaway_one_that_is_stopped_afterwards(tmp_path) -> None:
    dead = _dead_port()
    probe = ("import os, psycopg; url = os.environ['TEST_DATABASE_URL']; c = psycopg.connect(url, autocommit=True); "
             "assert c.execute('SELECT current_database()').fetchone()[0] == 'test'; c.close(); print(url)")
    result = subprocess.run([str(SCRIPT), sys.executable, "-c", probe], capture_output=True, text=True, timeout=180,
                            env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin",
                                 "TEST_DATABASE_URL": f"postgresql://postgres@127.0.0.1:{dead}/test",
                                 "TEST_ENV_INSTALL": "never"}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    url = result.stdout.strip().splitlines()[-1]
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    assert port != dead and "throwaway PostgreSQL" in result.stderr
    assert not _answers(port)  # stopped when the command ended
    assert not list(Path("/tmp").glob(f"test-postgres-*/.s.PGSQL.{port}"))  # and its directory removed


def test_what_cannot_be_installed_is_named_in_one_line_and_nothing_runs(tmp_path) -> None:
    marker = tmp_path / "ran"
    result = subprocess.run([str(SCRIPT), "touch", str(marker)], capture_output=True, text=True, timeout=60,
                            env={"PATH": "/usr/bin:/bin", "CHROMIUM": str(tmp_path / "no-chromium"),
                                 "TEST_ENV_INSTALL": "never"}, cwd=tmp_path)
    assert result.returncode == 3 and not marker.exists()
    lines = result.stderr.strip().splitlines()
    assert lines == ["make test: missing chromium; install them first (as root): apt-get install -y chromium"]


def test_make_test_and_ci_go_through_it() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert ".ci/test-env $(PY) -m pytest -q\n" in makefile
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
