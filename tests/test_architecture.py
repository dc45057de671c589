"""Imports point one way (docs/architecture.md): bot → handlers → generation → retrieval → storage; sync_jobs → retrieval,
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


# --- no import circles between modules ---------------------------------------------------------------------------

def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the project modules it imports anywhere in its file (a lazy import inside a function counts: it is
    still a dependency, and a circle through one is still a circle)."""
    modules = {_module_name(p, root): p for layer in LAYERS for p in sorted((root / layer).rglob("*.py"))}

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                deps.update(filter(None, (known(alias.name) for alias in node.names)))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                    package = package[: len(package) - node.level + 1]
                    base = ".".join([*package, base] if base else package)
                for alias in node.names:  # `from bot import wiring` depends on bot.wiring, not just on bot
                    deps.update(filter(None, [known(f"{base}.{alias.name}") if f"{base}.{alias.name}" in modules
                                              else known(base)]))
        deps.discard(name)
        graph[name] = deps
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path that returns to its start) per strongly connected group of modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)

    def path_in(group: set[str]) -> list[str]:  # breadth-first from the group's first module back to itself
        start = min(group)
        parents: dict[str, str] = {}
        frontier = [start]
        while frontier:
            nxt = []
            for v in frontier:
                for w in sorted(graph[v] & group):
                    if w == start:
                        path = [v]
                        while path[-1] != start:
                            path.append(parents[path[-1]])
                        return [start, *reversed(path[:-1]), start] if v != start else [start, start]
                    if w not in parents:
                        parents[w] = v
                        nxt.append(w)
            frontier = nxt
        return sorted(group)

    return [path_in(group) for group in groups]


def test_no_import_circles_between_modules() -> None:
    cycles = _cycles(_import_graph(ROOT))
    assert not cycles, "import circles:\n" + "\n".join("  " + " → ".join(c) for c in cycles)


def test_the_circle_guard_sees_a_circle(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "__init__.py").write_text("")
    (tmp_path / "bot" / "a.py").write_text("def f():\n    from bot import b\n")
    (tmp_path / "bot" / "b.py").write_text("from bot.c import x\n")
    (tmp_path / "bot" / "c.py").write_text("from .a import f\n")
    assert _cycles(_import_graph(tmp_path)) == [["bot.a", "bot.b", "bot.c", "bot.a"]]
