"""retrieval/language.py: the one place for the bot's word classes. Each class is a frozenset of lower-case single
tokens (or an ordered tuple of them where a regex or a value depends on the order), the two stopword lists differ
exactly by their documented deltas, and the modules that use a class use this one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from retrieval import language
from retrieval.language import (
    ANCHOR_STOPWORDS,
    CARDINALS,
    FILLERS,
    FUNCTION_WORDS,
    INDEX_STOPWORDS,
    ORDINALS,
    QUESTION_WORDS,
    SHARED_STOPWORDS,
)

ROOT = Path(__file__).resolve().parents[2]
_TOKEN = re.compile(r"[a-z0-9][a-z0-9'-]*")

# the classes that are sets of words, and those kept in order (a regex alternation or a value per position)
SETS = [name for name in language.__all__ if isinstance(getattr(language, name), frozenset)]
ORDERED = ["CARDINALS", "ORDINALS", "NUMBER_MAGNITUDES", "FRACTIONS", "MONTHS", "DAYS", "TIME_WORDS"]


def test_every_word_class_is_a_frozenset_or_an_ordered_tuple() -> None:
    assert len(SETS) >= 35  # the classes moved here from text, normalize, analyzer, refine, facts, answer_type, support
    for name in ORDERED:
        value = getattr(language, name)
        assert isinstance(value, tuple) and len(set(value)) == len(value), name


@pytest.mark.parametrize("name", SETS + ORDERED)
def test_a_class_holds_lower_case_single_tokens(name: str) -> None:
    words = list(getattr(language, name))
    assert words, name
    bad = [w for w in words if not isinstance(w, str) or w != w.lower() or not _TOKEN.fullmatch(w)]
    assert not bad, f"{name}: {bad}"


def test_the_two_stopword_lists_differ_exactly_by_their_documented_deltas() -> None:
    index_delta = set("""akankah apabila bagaimanakah berapakah berikan daripada deh dimana dong gimana jelaskan kah
        kapankah kenapa kok lah manakah mengapa menurut mohon namun nih pun sebuah sebutkan secara seorang siapakah
        sih tolong tuh tunjukkan ya""".split())
    anchor_delta = set("""a an and bahkan baru bersama cara for hanya harus hingga how in is jumlah kali kemudian lain
        lalu lebih maupun menjadi meski misalnya mungkin of on per salah sangat satu sekitar selain selama semua suatu
        tak tapi termasuk the tidak to waktu what when where which who""".split())
    assert INDEX_STOPWORDS - ANCHOR_STOPWORDS == index_delta
    assert ANCHOR_STOPWORDS - INDEX_STOPWORDS == anchor_delta
    assert INDEX_STOPWORDS & ANCHOR_STOPWORDS == SHARED_STOPWORDS and len(SHARED_STOPWORDS) == 85
    assert len(INDEX_STOPWORDS) == 118 and len(ANCHOR_STOPWORDS) == 133
    assert INDEX_STOPWORDS < FUNCTION_WORDS and not SHARED_STOPWORDS & index_delta


def test_the_analyzer_and_the_anchors_use_their_variant() -> None:
    from generation.text import content_words
    from retrieval.analyzer import Analyzer

    assert Analyzer().stopwords is INDEX_STOPWORDS
    # "mengapa" is an index stopword only, "lebih" an anchor stopword only
    assert Analyzer()("mengapa lebih") == ["lebih"]
    assert "mengapa" not in content_words("mengapa lebih")  # a question word there, not a stopword
    assert content_words("lebih cepat") == ["cepat"]


def test_question_words_hold_the_fillers_and_the_fused_forms() -> None:
    assert FILLERS < QUESTION_WORDS
    assert {"darimana", "kemanakah", "seberapakah", "bilamana"} <= QUESTION_WORDS


def test_number_words_keep_their_values() -> None:
    from generation.support import text_stems
    from retrieval.facts import _NUMBER_WORDS as FACT_NUMBERS

    assert CARDINALS.index("tujuh") + 1 == 7 and ORDINALS.index("kelima") + 1 == 5
    assert FACT_NUMBERS["kedelapan"] == 8 and FACT_NUMBERS["satu"] == 1 and "sembilan" not in FACT_NUMBERS
    assert "7" in text_stems("tujuh hari") and "sebelas" in text_stems("11 orang")


def _assigned_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}


def test_no_module_defines_a_class_of_language_py_again() -> None:
    """The names the classes had before they moved here are gone from the modules that defined them."""
    old = {
        "generation/text.py": {"QUESTION_WORDS", "_FUSED_QUESTION_WORDS", "ANSWER_TYPE_WORDS", "ALL_OF_THEM",
                               "STOPWORDS", "COLLOQUIAL_WORDS", "_REQUEST_NOUNS", "_REQUEST_VERBS", "NEGATIONS",
                               "_POLAR_BEFORE", "_PRE_TITLES", "_WH", "_YES_NO", "_SELF", "_REASON",
                               "_TRAILING_REASON", "_CHAT_REASON", "_PURPOSE", "_PARTICLES", "_ACK"},
        "retrieval/analyzer.py": {"STOPWORDS"},
        "retrieval/normalize.py": {"FILLERS", "FUNCTION_WORDS", "CHAT_SUPPLEMENT", "GLOSSARY", "_INFORMAL_TARGETS",
                                   "LEXICON_PATH"},
        "generation/refine.py": {"ATTRIBUTE_WORDS", "_TYPE_QUESTION_WORDS", "_CONNECTORS", "_SWITCH_WORDS"},
        "retrieval/facts.py": {"_PERSON_ASKED"},
        "generation/answer_type.py": {"MONTHS", "DAYS", "_TIME_WORDS"},
        "generation/support.py": {"_DEIXIS", "_HOURS_WORDS", "_CLOCK_WORDS"},
    }
    for rel, names in old.items():
        assert not _assigned_names(ROOT / rel) & names, rel


def test_language_imports_nothing_from_the_project() -> None:
    tree = ast.parse((ROOT / "retrieval" / "language.py").read_text(encoding="utf-8"))
    modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    project = ("generation", "retrieval", "storage", "bot", "handlers", "sync_jobs", "bench")
    assert not [m for m in modules if m.split(".")[0] in project]


def test_every_class_comment_names_its_provenance() -> None:
    """Each public constant is preceded by a comment (its provenance and where it is used)."""
    lines = (ROOT / "retrieval" / "language.py").read_text(encoding="utf-8").splitlines()
    tree = ast.parse("\n".join(lines))
    for node in tree.body:
        if not isinstance(node, ast.Assign | ast.AnnAssign):
            continue
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        name = target.id if isinstance(target, ast.Name) else ""
        if not name or name.startswith("_") or name in {"LEXICON_PATH"}:
            continue
        above = [ln for ln in lines[max(0, node.lineno - 12) : node.lineno - 1] if ln.startswith("#")]
        assert above, f"{name} has no comment"
# --- the normaliser's fired rules -----------------------------------------------------------------------------

def test_the_normaliser_names_the_colloquial_replacements() -> None:
    from retrieval.normalize import QueryNormalizer

    normalizer = QueryNormalizer(vocabulary={"syarat": 4, "beasiswa": 3})
    text, fired = normalizer.normalize_with_rules("kalo syarat beasiswa gimana?")
    assert text == normalizer.normalize("kalo syarat beasiswa gimana?") == "kalau syarat beasiswa bagaimana?"
    assert {"rule": "colloquial", "from": "kalo", "to": "kalau"} in fired
    assert {"rule": "colloquial", "from": "gimana", "to": "bagaimana"} in fired
    assert all(r["rule"] == "colloquial" for r in fired)


def test_the_normaliser_names_fillers_glossary_elongation_and_typos() -> None:
    from retrieval.normalize import QueryNormalizer

    normalizer = QueryNormalizer(vocabulary={"jadwal": 5, "krs": 2, "kartu": 2, "rencana": 2, "studi": 2,
                                             "penting": 1})
    text, fired = normalizer.normalize_with_rules("jdwal krs pentiiing bangettt dong kak")
    assert text == normalizer.normalize("jdwal krs pentiiing bangettt dong kak") == (
        "jadwal krs kartu rencana studi penting banget")
    rules = {(r["rule"], r["from"], r["to"]) for r in fired}
    assert ("typo", "jdwal", "jadwal") in rules
    assert ("glossary_expansion", "krs", "kartu rencana studi") in rules
    assert ("elongation", "pentiiing", "penting") in rules
    assert ("colloquial", "bangettt", "banget") in rules  # the lexicon has this spelling itself
    assert {("filler", "dong", ""), ("filler", "kak", "")} <= rules
    # a glossary shorthand the site does not use, whose long form is one word, is replaced
    assert normalizer.normalize_with_rules("smt 5")[1] == [{"rule": "glossary", "from": "smt", "to": "semester"}]


def test_a_question_in_formal_words_fires_no_rule() -> None:
    from retrieval.normalize import QueryNormalizer

    normalizer = QueryNormalizer(vocabulary={"syarat": 4, "beasiswa": 3})
    assert normalizer.normalize_with_rules("Apa syarat beasiswa?") == ("Apa syarat beasiswa?", [])


def test_every_fired_rule_is_a_named_rule() -> None:
    from retrieval.normalize import RULES, QueryNormalizer

    normalizer = QueryNormalizer(vocabulary={"jadwal": 5, "semester": 4, "syarat": 3, "daftar": 2})
    fired = []
    for q in ("gimanaaa syaratnya kak?", "jdwal smt 24/25 dong", "kpn daftarnya?", "kalo syarat gimana"):
        text, rules = normalizer.normalize_with_rules(q)
        assert text == normalizer.normalize(q) and normalizer.normalize_with_rules(q, expand=False)[0] == (
            normalizer.normalize(q, expand=False))
        fired += rules
    names = {r["rule"] for r in fired}
    assert names <= set(RULES) and {"elongation_colloquial", "clitic", "academic_year", "glossary"} <= names, fired
