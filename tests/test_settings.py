"""Settings: every field is documented in .env.example; values parse; errors name the variable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.settings import Settings, SettingsError, load_settings

ROOT = Path(__file__).resolve().parents[1]
DESIGN_NAMES = [
    "TELEGRAM_TOKEN", "TELEGRAM_WEBHOOK_URL", "TELEGRAM_SECRET_TOKEN", "WHATSAPP_TOKEN", "WHATSAPP_PHONE_NUMBER_ID",
    "WHATSAPP_VERIFY_TOKEN", "WHATSAPP_APP_SECRET", "ADMIN_IDS", "REDIS_URL", "DATA_DIR", "SITE_SEEDS",
    "SITE_ALLOWED_DOMAINS", "REINDEX_CRON", "LLM_MODEL_PATH", "LLM_BACKEND", "LLM_ENDPOINT", "EMBEDDER",
    "CRAWL_ALLOW_PRIVATE_NETWORKS", "CRAWL_DELAY_SECONDS", "HTTP_HOST", "HTTP_PORT", "ADMIN_TOKEN",
    "TELEGRAM_API_BASE_URL", "WHATSAPP_GRAPH_BASE_URL",
]


def _documented() -> dict[str, str]:
    found = {}
    for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Z0-9_]+)=(.*?)\s+#\s+(\S.*)$", line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def test_every_setting_is_documented_with_default_and_meaning() -> None:
    documented = _documented()
    fields = {name.upper() for name in Settings.model_fields}
    assert fields - set(documented) == set(), "undocumented settings"
    assert set(documented) - fields == set(), ".env.example documents settings that do not exist"
    for name in DESIGN_NAMES:
        assert name in documented


def test_documented_defaults_match_the_code(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in Settings.model_fields:
        monkeypatch.delenv(name.upper(), raising=False)
    defaults = Settings()
    for name, shown in _documented().items():
        value = getattr(defaults, name.lower())
        if shown == "":
            assert value in (None, [], ""), name
        elif isinstance(value, bool):
            assert str(value).lower() == shown, name
        elif isinstance(value, list):
            assert ",".join(value) == shown, name
        elif isinstance(value, float):
            assert value == float(shown), name
        else:
            assert str(value) == shown, name


def test_lists_and_secrets_parse(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SITE_SEEDS", "http://a.example/, http://b.example/x")
    monkeypatch.setenv("ADMIN_IDS", "123,456")
    monkeypatch.setenv("TELEGRAM_TOKEN", "123:abc")
    settings = load_settings()
    assert settings.site_seeds == ["http://a.example/", "http://b.example/x"]
    assert settings.admin_ids == ["123", "456"]
    assert settings.telegram_token is not None
    assert "123:abc" not in repr(settings)
    assert settings.telegram_token.get_secret_value() == "123:abc"


@pytest.mark.parametrize(
    ("name", "value"),
    [("HTTP_PORT", "99999"), ("CRAWL_ALLOW_PRIVATE_NETWORKS", "maybe"), ("FUSION", "max"), ("LLM_BACKEND", "gpt")],
)
def test_invalid_value_names_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, value: str) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert name in str(info.value)


def test_secret_values_never_appear_in_errors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TELEGRAM_TOKEN", "supersecret-123")
    monkeypatch.setenv("HTTP_PORT", "-1")
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert "supersecret-123" not in str(info.value)


def test_a_copied_env_example_loads_as_the_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`cp .env.example .env` is the documented first step of every deployment: it must load, unchanged."""
    monkeypatch.chdir(tmp_path)
    for name in Settings.model_fields:
        monkeypatch.delenv(name.upper(), raising=False)
    (tmp_path / ".env").write_text((ROOT / ".env.example").read_text(encoding="utf-8"), encoding="utf-8")
    assert load_settings().model_dump() == Settings(_env_file=None).model_dump()


def test_blank_value_means_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LLM_THREADS", "")
    monkeypatch.setenv("HTTP_PORT", "  ")
    monkeypatch.setenv("REDIS_URL", "")
    settings = load_settings()
    assert settings.llm_threads is None and settings.http_port == 8080 and settings.redis_url is None
