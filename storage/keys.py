"""Every Redis key and pub/sub channel name the bot uses, in one place.

All keys start with ``NAMESPACE`` so several deployments can share one Redis with their own namespace (the stores
take a ``namespace=`` argument; the reindex keys are global to one deployment).
"""

from __future__ import annotations

__all__ = [
    "INDEX_CHANNEL",
    "NAMESPACE",
    "REINDEX_LOCK",
    "REINDEX_TICK_PREFIX",
    "conversation",
    "user_choices",
    "dedup",
    "feedback_counts",
    "feedback_user",
    "user_state",
    "user_state_prefix",
]

NAMESPACE = "prodibot"

# pub/sub: a reindex announces each new index version here; every serving process reloads on it (bot.ops.watcher)
INDEX_CHANNEL = f"{NAMESPACE}:index"
# the one reindex lock across replicas (storage.locks.RedisLock)
REINDEX_LOCK = f"{NAMESPACE}:reindex:lock"
# one claim per schedule tick, so one replica runs it (storage.locks.RedisClaims); the digest adds "digest:<tick>"
REINDEX_TICK_PREFIX = f"{NAMESPACE}:reindex:tick:"


def conversation(user_key: str, namespace: str = NAMESPACE) -> str:
    """A user's message window (a Redis list)."""
    return f"{namespace}:conv:{user_key}"


def dedup(message_id: str, namespace: str = NAMESPACE) -> str:
    """Marks a platform message id as seen (SET NX EX)."""
    return f"{namespace}:dedup:{message_id}"


def user_state_prefix(user_key: str, namespace: str = NAMESPACE) -> str:
    """The prefix of every per-user state key (rate limit, last answer, …); /hapus deletes them all."""
    return f"{namespace}:user:{user_key}:"


def user_state(user_key: str, what: str, namespace: str = NAMESPACE) -> str:
    return user_state_prefix(user_key, namespace) + what


def user_choices(user_key: str, namespace: str = NAMESPACE) -> str:
    """The choices of a user's last ask-back (JSON list), which a ``pick:<index>`` button refers to."""
    return user_state(user_key, "choices", namespace)


def feedback_user(user_key: str, namespace: str = NAMESPACE) -> str:
    """A user's votes (a hash: answer id → vote)."""
    return f"{namespace}:fb:user:{user_key}"


def feedback_counts(namespace: str = NAMESPACE) -> str:
    """The 👍/👎 totals."""
    return f"{namespace}:fb:counts"
