"""The small-talk classifier (generation/smalltalk.py) on what it was not fitted on: the lexicon's held-out
spellings of each intent, the project's own question sets, and small talk mixed with a question."""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter

import pytest

from bench import idkmrc
from bench.train_smalltalk import (
    EVAL_SETS,
    SEEDS,
    actions,
    build_questions,
    build_smalltalk,
    campus,
    campus_terms,
    demonstrative,
    eval_messages,
    idkmrc_parts,
    load_lexicon,
    split_spellings,
    squash,
)
from generation.smalltalk import DEFAULT_PATH, INTENTS, QUESTION, SmallTalkClassifier, tokens


@pytest.fixture(scope="module")
def model() -> SmallTalkClassifier:
    return SmallTalkClassifier.load()


@pytest.fixture(scope="module")
def parts():
    return split_spellings(load_lexicon())


def test_held_out_spellings_of_each_intent_are_that_intent(model, parts):
    items = build_smalltalk("test", 200, parts)
    held = {squash(s) for spellings in parts["test"].values() for s, _ in spellings}
    assert all(held & {squash(t) for t in tokens(text)} for text, _ in items)  # each has a held-out spelling
    got = Counter()
    n = Counter(intent for _, intent in items)
    for text, intent in items:
        got[intent] += model.classify(text).intent == intent
    assert set(n) == set(INTENTS)
    overall = sum(got.values()) / sum(n.values())
    assert overall >= 0.90, {i: f"{got[i]}/{n[i]}" for i in INTENTS}
    # no intent far behind. Apology is the weakest: its held-out spelling "maapin" is nothing like the seed's "maaf";
    # 130/200 before 2026-11-29, 121/200 since the questions about "prodi ini" raised the threshold the dev split
    # chooses (0.51 -> 0.57); the model card compares both models on the same rows
    assert all(got[i] / n[i] >= 0.60 for i in INTENTS), {i: f"{got[i]}/{n[i]}" for i in INTENTS}


def test_held_out_spellings_never_reach_the_training_text(parts):
    # a spelling and its lengthened forms ("hallo", "halooo") are one spelling: none of a held-out one is seen
    held = {squash(s) for spellings in parts["test"].values() for s, _ in spellings}
    train = {squash(s) for spellings in parts["train"].values() for s, _ in spellings}
    seeds = {squash(w) for phrases in SEEDS.values() for p in phrases for w in p.split()}
    assert len(held) >= 50 and not held & train and not held & seeds
    seen = {squash(t) for text, _ in build_smalltalk("train", 300, parts) for t in tokens(text)}
    assert not held & seen


def test_the_projects_questions_are_questions(model):
    """answers, informal, informal_holdout, informal_final: never fitted on nor chosen on."""
    messages = [m for name in EVAL_SETS for m in eval_messages(name)]
    flagged = [m for m in messages if model.classify(m).is_smalltalk]
    assert len(messages) >= 300
    assert 1 - len(flagged) / len(messages) >= 0.99, flagged


@pytest.mark.parametrize("text, intent", [
    ("halo", "greeting"), ("hai kak", "greeting"), ("selamat pagi min", "greeting"),
    ("assalamualaikum", "salam"), ("makasih", "thanks"), ("thx ya", "thanks"), ("makasih ya", "thanks"),
    ("oke siap", "ack"), ("sip", "ack"), ("dadah", "goodbye"), ("maaf kak salah ketik", "apology"),
    ("kamu siapa?", "identity"), ("bisa bantu apa aja?", "capability"),
])
def test_the_issues_examples(model, text, intent):
    assert model.classify(text).intent == intent


@pytest.mark.parametrize("text", [
    "aduh lagi pusing banget ngerjain laporan", "gabut nih min", "doain aku lulus ya kak",
    "udah makan belum kak?", "hari ini hujan terus ya", "wkwkwk kamu lucu juga",
    # a known limit (model card): a longer wish with words IDK-MRC's questions use ("tepat waktu") goes to the
    # pipeline. Strict: when a retrained model gets it right, this fails and the limit is struck from the card
    pytest.param("doain aku lulus tepat waktu ya kak", marks=pytest.mark.xfail(strict=True, reason="known limit")),
])
def test_chatter_outside_the_study_program_is_small_talk(model, text):
    """Off-topic chatter gets the chit-chat reply, not a refusal from the pipeline."""
    assert model.classify(text).intent == "chitchat"


@pytest.mark.parametrize("text", [
    "ok makasih ya, selamat malam juga kak", "halo juga min, maaf baru nyapa", "maaf ya kak, makasih banyak",
    "sip dah jelas. dadah kak",
])
def test_two_kinds_of_small_talk_in_one_message_are_small_talk(model, text):
    assert model.classify(text).is_smalltalk


@pytest.mark.parametrize("text", [
    "yg semester 5", "yang lab jaringan kak", "bu rina aja", "pak hadi", "yg reguler aja min", "yang kelas malam",
])
def test_a_short_pick_of_a_subject_is_a_question(model, text):
    """A reply that names which one ("yg X", "bu X") is a follow-up for the pipeline, not an acknowledgement."""
    assert model.classify(text).intent == QUESTION


@pytest.mark.parametrize("text", [
    "halo min, kaprodi siapa ya?", "makasih kak, terus emailnya apa?", "assalamualaikum kak, mau tanya jadwal krs "
    "kapan?", "oke siap. trus ruang sidangnya dmn?", "hai, syarat skripsi apa aja", "kaprodi siapa?",
    "emailnya?", "kalo pkl?", "kapan jadwal krs? makasih ya", "selamat pagi, berapa sks kerja praktik?",
    "maaf kak mau tanya, beasiswa dibuka kapan?", "kamu tau jadwal uts kapan?",
])
def test_small_talk_with_a_question_is_a_question(model, text):
    assert model.classify(text).intent == QUESTION


@pytest.mark.skipif(not idkmrc.train_path().is_file(), reason="IDK-MRC train.json is absent (set IDKMRC_TRAIN)")
def test_generated_mixes_on_held_out_questions_are_questions(model, parts):
    data = idkmrc_parts()
    chat = build_smalltalk("test", 50, parts)
    rows = build_questions("test", data, chat, parts, mixes=600, followups=0, sentences=0)
    mixed = [t for t, _ in rows if any(t.startswith(c) or t.endswith(c) for c, _ in chat)]
    rng = random.Random(0)
    sample = rng.sample(mixed, min(400, len(mixed)))
    assert len(sample) >= 300
    flagged = [t for t in sample if model.classify(t).is_smalltalk]
    assert len(flagged) / len(sample) <= 0.01, flagged


@pytest.mark.skipif(not idkmrc.train_path().is_file(), reason="IDK-MRC train.json is absent (set IDKMRC_TRAIN)")
def test_held_out_questions_about_this_thing_are_questions(model):
    """IDK-MRC check-split questions whose closing name is said with "ini" / "itu" / "tersebut" ("luas pulau ini
    berapa?"): the identity seeds say "ini siapa", and the classifier before 2026-11-29 took 6.0% of these (39 of
    646) for small talk, against 1.0% of the test split's question rows."""
    rng = random.Random(7)
    texts = [t for q in idkmrc_parts()["test"]["questions"] if (t := demonstrative(q, rng))]
    assert len(texts) >= 500
    flagged = [t for t in texts if model.classify(t).is_smalltalk]
    assert len(flagged) / len(texts) <= 0.02, flagged


@pytest.mark.parametrize("text", [
    "dosen prodi ini siapa aja", "visi prodi ini apa", "akreditasi prodi ini apa?", "kampus ini dimana ya",
    "jurusan ini akreditasinya apa", "kaprodi jurusan ini siapa?",
])
def test_a_question_about_this_study_program_is_a_question(model, text):
    assert model.classify(text).intent == QUESTION


@pytest.mark.parametrize("text", ["ini siapa", "kamu ini siapa?", "ini bot ya?", "ini admin prodi?", "kamu itu apa"])
def test_asking_who_answers_stays_identity(model, text):
    assert model.classify(text).intent == "identity"


def test_a_question_ending_on_a_name_is_said_with_a_demonstrative():
    rng = random.Random(0)
    forms = {demonstrative("Siapakah pendiri kerajaan Majapahit?", rng) for _ in range(40)}
    assert "siapakah pendiri kerajaan ini?" in forms and "pendiri kerajaan ini siapa?" in forms
    assert all(f.startswith(("siapakah pendiri kerajaan ", "pendiri kerajaan ")) for f in forms)
    assert demonstrative("Kapan Majapahit berdiri?", rng) is None  # no common noun before the name
    assert demonstrative("Siapa presiden pertama Indonesia Raya yang terpilih?", rng) is None  # not at the end
    assert demonstrative("Siapa nama ibunya?", rng) is None


def test_campus_questions_take_a_passage_verb_and_a_held_out_campus_thing():
    assert actions("Para petani mengairi sawah dengan kincir.") == [("mengairi", "sawah")]
    assert actions("Ia menjadi raja, lalu membangun candi besar di Jawa.") == [("menjadi", "raja"),
                                                                              ("membangun", "candi besar")]
    assert actions("Kota itu dibangun pada tahun 1200.") == []
    terms = campus_terms()
    assert not set(terms["test"]) & (set(terms["train"]) | set(terms["dev"]))
    assert "krs" in {t for p in terms.values() for t in p} and "gmn" not in {t for p in terms.values() for t in p}
    rng = random.Random(0)
    asked = [campus(["Para petani mengairi sawah dengan kincir."], ["krs"], rng) for _ in range(200)]
    assert any(a and a.startswith("bagaimana cara mengairi krs") for a in asked)
    assert all(a is None or "krs" in a for a in asked)


def test_uncertain_or_long_messages_go_to_the_pipeline(model):
    assert model.classify("").intent == QUESTION
    assert model.classify("halo " * 200).intent == QUESTION  # longer than any small talk seen
    decision = model.classify("halo")
    assert decision.is_smalltalk and model.threshold <= decision.confidence <= 1.0
    assert 0.5 <= model.threshold < 1.0


def test_the_artifact_is_the_one_the_card_describes():
    card = (DEFAULT_PATH.parent / "MODEL_CARD.md").read_text(encoding="utf-8")
    sha = re.search(r"sha256 `([0-9a-f]{64})`", card).group(1)
    assert hashlib.sha256(DEFAULT_PATH.read_bytes()).hexdigest() == sha
    assert (DEFAULT_PATH.parent / "train_log.jsonl").is_file()


def test_every_intent_the_model_knows_has_a_reply_of_its_own(model):
    from handlers import texts

    assert set(model.classes) - {QUESTION} == set(INTENTS)
    assert set(texts.SMALLTALK) == set(INTENTS)
    assert len({texts.smalltalk_reply(i) for i in INTENTS}) == len(INTENTS)
