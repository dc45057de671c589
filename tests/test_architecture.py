"""Imports point one way (DESIGN.md): bot → handlers → generation → retrieval → storage; sync_jobs → retrieval,
storage. Channel libraries stay in bot/ and handlers/."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("bot", "handlers", "generation", "retrieval", "sync_jobs", "storage")
ALLOWED: dict[str, set[str]] = {
    "storage": set(),
    "retrieval": {"storage"},
    "generation": {"retrieval", "storage"},
    "sync_jobs": {"retrieval", "storage"},
    "handlers": {"generation", "retrieval", "storage"},
    "bot": set(LAYERS),
}
CHANNEL_LIBS = ("telegram", "aiohttp.web", "aiohttp.web_request", "aiohttp.web_response")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def _modules(layer: str) -> list[Path]:
    return sorted((ROOT / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", LAYERS)
def test_layers_import_only_downwards(layer: str) -> None:
    problems = []
    for path in _modules(layer):
        for lineno, name in _imports(path):
            top = name.split(".")[0]
            if top in LAYERS and top != layer and top not in ALLOWED[layer]:
                problems.append(f"{path.relative_to(ROOT)}:{lineno} imports {name}")
    assert not problems, "upward or sideways imports:\n" + "\n".join(problems)


@pytest.mark.parametrize("layer", ["generation", "retrieval", "sync_jobs", "storage"])
def test_no_channel_library_below_handlers(layer: str) -> None:
    problems = []
    for path in _modules(layer):
        for lineno, name in _imports(path):
            if any(name == lib or name.startswith(lib + ".") for lib in CHANNEL_LIBS):
                problems.append(f"{path.relative_to(ROOT)}:{lineno} imports {name}")
    assert not problems, "channel libraries below handlers/:\n" + "\n".join(problems)


def test_telegram_only_in_its_adapter_within_handlers() -> None:
    problems = []
    for path in _modules("handlers"):
        if path.stem.startswith("telegram"):
            continue
        for lineno, name in _imports(path):
            if name == "telegram" or name.startswith("telegram."):
                problems.append(f"{path.relative_to(ROOT)}:{lineno} imports {name}")
    assert not problems, "\n".join(problems)


def test_environment_is_read_only_in_bot() -> None:
    problems = []
    for layer in LAYERS:
        if layer == "bot":
            continue
        for path in _modules(layer):
            text = path.read_text(encoding="utf-8")
            for needle in ("os.getenv", "os.environ"):
                if needle in text:
                    problems.append(f"{path.relative_to(ROOT)} uses {needle}")
    assert not problems, "\n".join(problems)


def test_the_guard_sees_a_violation(tmp_path: Path) -> None:
    """The checker itself works: a storage module importing generation is flagged."""
    bad = tmp_path / "bad.py"
    bad.write_text("from generation.types import Answer\nimport telegram\n")
    names = [name for _, name in _imports(bad)]
    assert "generation.types" in names and "telegram" in names
