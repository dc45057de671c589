"""bench.synonymy_probe: reading a MyThes thesaurus and counting what its synonyms would cover."""

from __future__ import annotations

from pathlib import Path

from bench import idkmrc
from bench.synonymy_probe import load_thesaurus, main, probe_thesaurus
from generation.support import stem

# the MyThes layout LibreOffice's thesauri use: the encoding, then "word|n" and n lines "[pos]|synonym|…"
_DAT = "\n".join([
    "ISO-8859-1",
    "biaya|1",
    "[n]|anggaran|ongkos|uang kuliah",
    "kantor|2",
    "[n]|biro|sekretariat",
    "[ant]|rumah",
    "kantor besar|1",
    "[n]|pusat",
    "",
]).encode("iso-8859-1")


def _thesaurus(tmp_path: Path) -> Path:
    path = tmp_path / "th_id_ID_v2.dat"
    path.write_bytes(_DAT)
    return path


def test_the_thesaurus_maps_stems_to_single_word_synonyms_without_antonyms_or_phrases(tmp_path):
    th = load_thesaurus(_thesaurus(tmp_path))
    assert th[stem("biaya")] == {stem("anggaran"), stem("ongkos")}  # "uang kuliah" is a phrase
    assert th[stem("kantor")] == {stem("biro"), stem("sekretariat")}  # "[ant]|rumah" is an antonym
    assert "kantor besar" not in th and stem("pusat") not in th.get(stem("kantor"), set())


def test_the_probe_counts_a_question_whose_missing_word_has_a_synonym_in_its_passage(tmp_path):
    passage = idkmrc.Passage(n=0, context="Sekretariat program studi ada di gedung B lantai dua.", questions=(
        idkmrc.Question(id="a", question="Di mana kantor program studi?", answerable=True, answers=("gedung B",)),
        idkmrc.Question(id="u", question="Kapan ujian kriptografi program studi?", answerable=False, answers=()),
    ))
    counts = probe_thesaurus([passage], _thesaurus(tmp_path))
    assert counts["answerable"] == 1 and counts["unanswerable"] == 1
    assert counts["answerable: every missing anchor covered by a synonym"] == 1  # kantor → sekretariat
    assert counts["unanswerable: some anchor missing"] == 1  # kriptografi, ujian: no synonym on the page
    assert counts["unanswerable: every missing anchor covered by a synonym"] == 0


def test_without_a_thesaurus_the_probe_says_how_to_get_one(tmp_path, capsys):
    assert main(["--probe", "thesaurus", "--thesaurus", str(tmp_path / "none.dat")]) == 2
    assert "mythes-id" in capsys.readouterr().err
