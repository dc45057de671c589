"""The Dockerfile and docker-compose.yml.

There is no Docker engine on the development and CI machines (only, at most, the docker client without the compose
plugin), so nothing is built here. When the compose plugin (or docker-compose) is present, `docker compose config`
validates the file; otherwise the same structure is checked by parsing the YAML, which is what always runs here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from bot.settings import env_names as setting_names

ROOT = Path(__file__).resolve().parents[1]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))


def _compose_cli() -> list[str] | None:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def test_docker_compose_config_validates_when_the_cli_is_available(tmp_path: Path) -> None:
    """`docker compose config` needs no engine. CI installs Debian's docker-compose (.ci/run), so this runs there;
    it validates the file as a user has it after the documented `cp .env.example .env`."""
    cli = _compose_cli()
    if cli is None:
        pytest.skip("no docker compose plugin here (no Docker engine either); the YAML checks below still run")
    for name in ("docker-compose.yml", "Dockerfile"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copy(ROOT / ".env.example", tmp_path / ".env")
    result = subprocess.run([*cli, "-f", str(tmp_path / "docker-compose.yml"), "config", "--quiet"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr


def test_compose_has_bot_and_redis_with_volumes_and_healthchecks() -> None:
    compose = _compose()
    services = compose["services"]
    assert set(services) >= {"bot", "redis"}
    declared_volumes = set(compose.get("volumes") or {})
    for name, service in services.items():
        assert "healthcheck" in service, f"{name} has no healthcheck"
        test = service["healthcheck"]["test"]
        assert isinstance(test, list) and test[0] in ("CMD", "CMD-SHELL"), name
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            assert source in declared_volumes, f"{name} uses undeclared volume {source}"
    redis_service, bot = services["redis"], services["bot"]
    assert any(v.endswith(":/data") for v in redis_service["volumes"])
    assert "redis-cli" in redis_service["healthcheck"]["test"]
    assert bot["depends_on"]["redis"]["condition"] == "service_healthy"
    assert "/readyz" in " ".join(bot["healthcheck"]["test"])  # readiness, not mere liveness
    assert (ROOT / bot["build"]["context"] / bot["build"]["dockerfile"]).is_file()
    env = bot["environment"]
    assert env["REDIS_URL"].startswith("redis://redis:6379")
    assert any(v.split(":", 1)[1] == env["DATA_DIR"] for v in bot["volumes"])
    fields = set(setting_names())
    assert set(env) <= fields, f"unknown settings in compose: {set(env) - fields}"
    # webhooks must go through the HTTPS reverse proxy: the port is published on loopback only
    assert all(str(p).startswith("127.0.0.1:") for p in bot["ports"])


def test_dockerfile_is_multi_stage_non_root_with_model_and_healthcheck() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    stages = re.findall(r"^FROM\s+\S+\s+AS\s+(\w+)", text, flags=re.M | re.I)
    assert len(stages) >= 2 and "builder" in stages
    # llama-cpp-python is built in the builder stage, with the same pin as pyproject.toml
    pin = re.search(r'"llama-cpp-python==([\d.]+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    builder = text.split("AS runtime")[0]
    assert f"llama-cpp-python=={pin}" in builder
    assert "ensure_default_model" in builder  # the default GGUF is assembled at build time
    runtime = text.split("AS runtime", 1)[1]
    assert "COPY --from=builder /opt/models" in runtime
    user = re.findall(r"^USER\s+(\S+)", runtime, flags=re.M)
    assert user and not user[-1].startswith(("root", "0"))
    assert re.search(r"^HEALTHCHECK .*", runtime, flags=re.M) and "/readyz" in runtime
    env_names = set(re.findall(r"\b([A-Z][A-Z0-9_]+)=", runtime))
    fields = set(setting_names())
    assert {"DATA_DIR", "HTTP_HOST", "LLM_MODEL_PATH"} <= env_names & fields
    assert 'CMD ["python", "-m", "bot", "serve"]' in runtime


def test_dockerignore_keeps_secrets_and_state_out_of_the_image() -> None:
    lines = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert {".env", ".venv", "data", ".git"} <= lines
