"""Settings: every field is documented in .env.example; values parse; errors name the variable."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from bot.settings import Settings, SettingsError, env_names, load_settings, value_of

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
    fields = set(env_names())
    assert fields - set(documented) == set(), "undocumented settings"
    assert set(documented) - fields == set(), ".env.example documents settings that do not exist"
    for name in DESIGN_NAMES:
        assert name in documented


def test_documented_defaults_match_the_code(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in env_names():
        monkeypatch.delenv(name, raising=False)
    defaults = Settings()
    for name, shown in _documented().items():
        value = value_of(defaults, name)
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
    assert settings.crawl.seeds == ["http://a.example/", "http://b.example/x"]
    assert settings.channels.admin_ids == ["123", "456"]
    assert settings.channels.telegram_token is not None
    assert "123:abc" not in repr(settings)
    assert settings.channels.telegram_token.get_secret_value() == "123:abc"


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
    for name in env_names():
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".env").write_text((ROOT / ".env.example").read_text(encoding="utf-8"), encoding="utf-8")
    assert load_settings().model_dump() == Settings(_env_file=None).model_dump()


def test_graph_api_version_is_pywas_and_stays_overridable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The default WHATSAPP_GRAPH_BASE_URL names the Graph API version the pinned pywa targets; a deployment can
    still point it elsewhere (another version, a loopback stand-in)."""
    from pywa import utils as pywa_utils

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WHATSAPP_GRAPH_BASE_URL", raising=False)
    default = load_settings().channels.whatsapp_graph_base_url
    assert default == f"https://graph.facebook.com/v{pywa_utils.Version.GRAPH_API.value}"
    monkeypatch.setenv("WHATSAPP_GRAPH_BASE_URL", "https://graph.facebook.com/v27.0")
    assert load_settings().channels.whatsapp_graph_base_url == "https://graph.facebook.com/v27.0"


def test_blank_value_means_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LLM_THREADS", "")
    monkeypatch.setenv("HTTP_PORT", "  ")
    monkeypatch.setenv("REDIS_URL", "")
    settings = load_settings()
    assert settings.llm_threads is None and settings.channels.http_port == 8080 and settings.redis_url is None


def test_the_variable_names_users_have_reach_their_group(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FUSION_DENSE_WEIGHT", "0.4")
    monkeypatch.setenv("ANSWER_MIN_SIMILARITY", "0.7")
    monkeypatch.setenv("crawl_max_pages", "12")  # case does not matter, as before
    (tmp_path / ".env").write_text("REINDEX_IN_SUBPROCESS=false\nHTTP_PORT=9000\nFUSION_DENSE_WEIGHT=0.9\n")
    settings = load_settings()
    assert settings.retrieval.dense_weight == 0.4  # the environment wins over .env
    assert settings.answers.min_top_similarity == 0.7 and settings.crawl.max_pages == 12
    assert settings.ops.in_subprocess is False and settings.channels.http_port == 9000
    given = load_settings(fusion_dense_weight=0.3, site_seeds="https://a.example/")  # keywords: the flat names too
    assert given.retrieval.dense_weight == 0.3 and given.crawl.seeds == ["https://a.example/"]


def test_each_layer_config_is_built_from_its_group_with_one_default_per_knob() -> None:
    """A grouped knob has the field name of its layer's frozen config and that config's default."""
    from bot import wiring
    from bot.settings import GROUPS, config_from
    from generation.pipeline import PipelineConfig
    from retrieval.config import RetrievalConfig
    from sync_jobs.crawl import CrawlConfig
    from sync_jobs.reindex import ReindexConfig

    settings = Settings(_env_file=None, fusion_dense_weight=0.3, llm_max_tokens=32, crawl_retries=1,
                        reindex_max_error_ratio=0.1)
    for group, config in (("crawl", CrawlConfig), ("retrieval", RetrievalConfig), ("answers", PipelineConfig),
                          ("ops", ReindexConfig)):
        defaults = {f.name: f.default for f in dataclasses.fields(config)}
        for name, info in GROUPS[group].model_fields.items():
            layer_field = (info.json_schema_extra or {}).get("config_field")
            if layer_field is not None:
                assert layer_field == name and name in defaults, (group, name)
                value = getattr(Settings(_env_file=None), group).__getattribute__(name)
                assert value == (list(defaults[name]) if isinstance(value, list) else defaults[name]), (group, name)
    assert wiring.build_retrieval_config(settings).dense_weight == 0.3
    assert wiring.build_pipeline_config(settings).max_tokens == 32
    assert wiring.build_crawl_config(settings, seeds=["https://a.example/"]).retries == 1
    assert config_from(ReindexConfig, settings.ops, serving_store=Path("s"), staging_dir=Path("t")).max_error_ratio == 0.1


def test_a_layer_config_check_names_the_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name, value in (("FUSION_DENSE_WEIGHT", "1.5"), ("CRAWL_ROBOTS_5XX", "maybe"), ("ABSTENTION", "sometimes"),
                        ("SITE_ALLOWED_PATH_PREFIXES", "informatika")):
        monkeypatch.setenv(name, value)
        with pytest.raises(SettingsError) as info:
            load_settings()
        assert name in str(info.value)
        monkeypatch.delenv(name)
