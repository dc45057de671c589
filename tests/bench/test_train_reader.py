"""The reader's training code path end to end on a few dozen IDK-MRC questions (the CI smoke run): data split,
cache of the frozen layers, training, calibration, export, model card; the exported weights load in the numpy
reader and agree with the torch model they came from."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from generation.reader import Reader
from generation.reader.reader import CONFIG_FILE, WEIGHTS_FILE, sha256_of

pytestmark = pytest.mark.slow  # trains and exports a reader (smoke run)

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("smoke")
    out, work = base / "reader", base / "work"  # the in-domain step's test reads the main run's work dir beside out
    out.mkdir()
    work.mkdir()
    run = subprocess.run([sys.executable, "-m", "bench.train_reader", "--smoke", "24", "--epochs", "1",
                          "--asked", "0.5", "--among", "0.5", "--out", str(out), "--work", str(work), "--threads", "2"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    return out


def test_smoke_run_writes_weights_card_and_log(smoke):
    meta = json.loads((smoke / CONFIG_FILE).read_text(encoding="utf-8"))
    assert meta["sha256"] == sha256_of(smoke / WEIGHTS_FILE)
    card = (smoke / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert "SMOKE RUN" in card and meta["sha256"] in card and "MIT" in card
    # the data transforms the run used are named, each with the function that does it
    assert "as_students_type" in card and "as_students_ask" in card and "among_others" in card
    assert "as_lines" not in card
    events = [json.loads(line)["event"] for line in (smoke / "train_log.jsonl").read_text().splitlines()]
    assert events[0] == "data" and {"cache", "epoch", "final", "exported"} <= set(events)


def test_exported_weights_give_the_torch_logits_in_numpy(smoke):
    import torch

    from bench import reader_torch as tm

    reader = Reader(smoke)
    cfg = reader.config
    from generation.reader.reader import windows_for

    wins = windows_for(reader.e5, cfg, "Kapan program studi berdiri?",
                       "Program studi Informatika berdiri pada tahun 2004 di Malang.")
    (s_np, e_np), = reader.logits(wins)
    lower = tm.Lower(reader.e5, cfg.frozen_layers).eval()
    upper = tm.Upper(reader.e5, cfg.frozen_layers)
    with np.load(smoke / WEIGHTS_FILE) as data:
        for k, layer in enumerate(upper.layers):
            i = cfg.frozen_layers + k
            layer.load_e5({name: data[f"l{i}.{name}"].astype(np.float32)
                           for name in ("q.w", "q.b", "k.w", "k.b", "v.w", "v.b", "ao.w", "ao.b", "aln.w", "aln.b",
                                        "fi.w", "fi.b", "fo.w", "fo.b", "oln.w", "oln.b")})
        with torch.no_grad():
            upper.qa.weight.copy_(torch.from_numpy(data["qa.w"].astype(np.float32)))
            upper.qa.bias.copy_(torch.from_numpy(data["qa.b"].astype(np.float32)))
    ids = wins[0].ids[None]
    mask = torch.ones(ids.shape, dtype=torch.bool)
    with torch.no_grad():
        logits = upper(lower(ids, mask), mask)[0].numpy()
    assert np.allclose(logits[:, 0], s_np, atol=2e-3) and np.allclose(logits[:, 1], e_np, atol=2e-3)


def test_informal_rewrite_touches_only_the_train_part_and_is_fixed_by_the_seed():
    from bench.idkmrc import train_path
    from bench.train_reader import informal_spellings, load_examples

    formal = load_examples(train_path(None), None)
    informal = load_examples(train_path(None), None, 0.5)
    again = load_examples(train_path(None), None, 0.5)
    assert [e["question"] for e in informal["train"]] == [e["question"] for e in again["train"]]
    for part in ("dev", "check"):
        assert [e["question"] for e in informal[part]] == [e["question"] for e in formal[part]]
    changed = [(f["question"], i["question"]) for f, i in zip(formal["train"], informal["train"], strict=True)
               if f["question"] != i["question"]]
    assert 0.4 < len(changed) / len(formal["train"]) < 0.6
    assert all(i == i.lower() for _, i in changed)
    # the spellings come from the external lexicon: a rewritten word is a lexicon spelling of the formal word
    spellings = informal_spellings()
    slang = {s for forms, _ in spellings.values() for s in forms}
    swapped = [(a, b) for f, i in changed for a, b in zip(f.lower().split(), i.split(), strict=False)
               if a.rstrip("?.,!") != b.rstrip("?.,!")]
    assert swapped and all(b.rstrip("?.,!") in slang and b.rstrip("?.,!") in spellings[a.rstrip("?.,!")][0]
                           for a, b in swapped)
    # only the question changes: the passage and the answers' offsets into it are the dataset's own
    assert all((f["context"], f["answers"]) == (i["context"], i["answers"])
               for f, i in zip(formal["train"], informal["train"], strict=True))


def test_as_students_ask_moves_the_question_word_to_the_end_or_drops_it():
    import random

    from bench.train_reader import as_students_ask

    forms = {as_students_ask("Di mana letak Candi Borobudur?", random.Random(s)) for s in range(40)}
    assert forms == {"letak Candi Borobudur di mana?", "letak Candi Borobudur"}
    assert {as_students_ask("siapa pendiri kerajaan majapahit", random.Random(s)) for s in range(40)} == {
        "pendiri kerajaan majapahit siapa", "pendiri kerajaan majapahit"}
    # a question that does not open with a question word, or is nothing but one, stays as it is
    assert as_students_ask("Candi Borobudur dibangun oleh siapa?", random.Random(0)) == \
        "Candi Borobudur dibangun oleh siapa?"
    assert as_students_ask("Apa?", random.Random(0)) == "Apa?"
    # at the end a question word loses its formal "-kah"
    assert {as_students_ask("Siapakah penemu telepon?", random.Random(s)) for s in range(40)} == {
        "penemu telepon siapa?", "penemu telepon"}


def test_asked_forms_touch_only_the_train_part_and_are_fixed_by_the_seed():
    from bench.idkmrc import train_path
    from bench.train_reader import load_examples

    plain = load_examples(train_path(None), None)
    asked = load_examples(train_path(None), None, 0.0, 0.0, 0.4)
    assert asked == load_examples(train_path(None), None, 0.0, 0.0, 0.4)
    for part in ("dev", "check"):
        assert asked[part] == plain[part]
    changed = [(p["question"], a["question"]) for p, a in zip(plain["train"], asked["train"], strict=True)
               if p["question"] != a["question"]]
    assert 0.2 < len(changed) / len(plain["train"]) < 0.4
    # the words stay the dataset's own: a changed question is the original's words, one question word moved or gone
    for before, after in changed:
        words = before.lower().strip().rstrip("?").split()
        now = after.lower().strip().rstrip("?").split()
        words[0] = words[0].removesuffix("kah")
        assert now == words[1:] + words[:1] or now == words[1:] or now == words[2:] + words[:2] or now == words[2:]
    assert all((p["context"], p["answers"]) == (a["context"], a["answers"])
               for p, a in zip(plain["train"], asked["train"], strict=True))


def test_as_lines_lays_prose_out_in_lines_and_maps_each_character():
    from bench.train_reader import as_lines, moved_start

    text = "Kota Lama adalah pusat dagang. Pada 1900 kota itu punya 3 pasar. Sungai Biru merupakan batas utara."
    lines, where = as_lines(text)
    assert lines == "Kota Lama: pusat dagang\nPada 1900 kota itu punya 3 pasar\nSungai Biru: batas utara"
    for answer in ("pusat dagang", "1900", "3 pasar", "Sungai Biru"):
        at = moved_start(where, text.index(answer), len(answer))
        assert at is not None and lines[at:at + len(answer)] == answer
    # an answer the re-layout cuts (across a copula, or across a sentence end) does not survive
    assert moved_start(where, text.index("Lama adalah pusat"), len("Lama adalah pusat")) is None
    assert moved_start(where, text.index("dagang. Pada"), len("dagang. Pada")) is None


def test_relaid_copies_join_only_the_train_part_and_keep_their_answers():
    from bench.idkmrc import train_path
    from bench.train_reader import load_examples

    plain = load_examples(train_path(None), None)
    laid = load_examples(train_path(None), None, 0.0, 0.2)
    for part in ("dev", "check"):
        assert laid[part] == plain[part]
    copies = [e for e in laid["train"] if e["id"].endswith("-lines")]
    assert [e for e in laid["train"] if not e["id"].endswith("-lines")] == plain["train"]
    assert 0.1 < len(copies) / len(plain["train"]) < 0.3
    assert copies == [e for e in load_examples(train_path(None), None, 0.0, 0.2)["train"] if e["id"].endswith("-lines")]
    originals = {e["id"]: e for e in plain["train"]}
    for copy in copies:
        # each kept answer covers the same characters it covered in the passage as written
        source = originals[copy["id"].removesuffix("-lines")]
        where = dict(source["answers"])
        assert all(copy["context"][at:at + len(text)] == source["context"][where[text]:where[text] + len(text)]
                   for text, at in copy["answers"])
        assert copy["answerable"] == bool(copy["answers"]) and copy["question"] == source["question"]


def test_among_others_copies_cut_the_passage_to_one_section_among_other_passages():
    from bench.idkmrc import train_path
    from bench.train_reader import load_examples

    plain = load_examples(train_path(None), None)
    mixed = load_examples(train_path(None), None, 0.0, 0.0, 0.0, 0.2)
    for part in ("dev", "check"):
        assert mixed[part] == plain[part]
    copies = [e for e in mixed["train"] if e["id"].endswith("-among")]
    assert [e for e in mixed["train"] if not e["id"].endswith("-among")] == plain["train"]
    assert 0.1 < len(copies) / len(plain["train"]) < 0.3
    assert copies == [e for e in load_examples(train_path(None), None, 0.0, 0.0, 0.0, 0.2)["train"]
                      if e["id"].endswith("-among")]
    originals = {e["id"]: e for e in plain["train"]}
    passages = {e["context"] for e in plain["train"]}
    assert any(not c["answerable"] for c in copies) and any(c["answerable"] for c in copies)
    for copy in copies:
        source = originals[copy["id"].removesuffix("-among")]
        sections = copy["context"].split("\n\n")
        assert 3 <= len(sections) <= 5 and copy["question"] == source["question"]
        # exactly one section comes from the question's own passage; the others from other passages
        own = [x for x in sections if x in source["context"]]
        assert len(own) == 1 and all(any(x in p for p in passages if p != source["context"])
                                     for x in sections if x is not own[0])
        assert copy["answerable"] == source["answerable"] == bool(copy["answers"])
        at = copy["context"].index(own[0])
        for text, start in copy["answers"]:
            assert copy["context"][start:start + len(text)] == text and at <= start < at + len(own[0])


def test_the_in_domain_step_runs_on_the_smoke_run_and_leaves_its_fold_out(smoke, tmp_path):
    """``bench.train_reader_site`` after the smoke run (CI): the sample site crawled and indexed, a few of its dev
    items read as windows, one epoch with the main run's IDK-MRC windows replayed, the export; with ``--folds``,
    the left-out fold is recorded in reader.json."""
    import shutil

    out = tmp_path / "site"
    shutil.copytree(smoke, out)
    run = subprocess.run([sys.executable, "-m", "bench.train_reader_site", "--out", str(out),
                          "--work", str(smoke.parent / "work"), "--smoke", "6", "--epochs", "1",
                          "--folds", "2", "--fold", "1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    meta = json.loads((out / CONFIG_FILE).read_text(encoding="utf-8"))
    assert meta["site_step"]["left_out_fold"] == {"folds": 2, "fold": 1, "sets": ["answers.jsonl", "informal.jsonl"]}
    assert meta["site_step"]["held_out"] == ["informal_holdout.jsonl", "informal_final.jsonl"]
    assert meta["config"]["int8"] is True  # the step ships the reader as it runs (int8 projections)
    assert meta["sha256"] == sha256_of(out / WEIGHTS_FILE) != json.loads((smoke / CONFIG_FILE).read_text())["sha256"]
    rows = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    data = next(r for r in rows if r["event"] == "site_data")
    assert 0 < data["examples"] <= 6 * 3 and data["windows"] >= data["examples"]
    assert data["args"]["informal"] == 0.0
    assert [r["event"] for r in rows][-2:] == ["site_epoch", "site_exported"]


def test_the_in_domain_step_refuses_to_replay_windows_unlike_the_main_runs(smoke, tmp_path):
    """The step replays the main run's cached IDK-MRC windows with labels it rebuilds from the run's data options
    (``train_reader.run_examples``). Rebuilt with other options (here: the smoke run's ``--asked`` forgotten), the
    labels would point at other tokens, so the step stops and says why instead of training on them."""
    import shutil

    out, work = tmp_path / "site", tmp_path / "work"
    shutil.copytree(smoke, out)
    shutil.copytree(smoke.parent / "work", work)
    signature = json.loads((work / "signature.json").read_text(encoding="utf-8"))
    assert signature["asked"] == 0.5
    (work / "signature.json").write_text(json.dumps({**signature, "asked": 0.0}), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "bench.train_reader_site", "--out", str(out), "--work", str(work),
                          "--smoke", "6", "--epochs", "1"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode != 0
    assert "could not be rebuilt" in run.stderr


def test_site_step_oof_reads_the_left_out_fold_with_the_step_reader(smoke, tmp_path):
    """``bench.site_step_oof`` end to end on the smoke readers: the reader without a step reads every fold, a step
    trained without fold 1 reads fold 1 only, both read blind set A; the report is written as JSON."""
    import shutil

    step = tmp_path / "step"
    shutil.copytree(smoke, step)
    meta = json.loads((step / CONFIG_FILE).read_text(encoding="utf-8"))
    meta["site_step"] = {"left_out_fold": {"folds": 2, "fold": 1}}  # the reading does not depend on the weights
    (step / CONFIG_FILE).write_text(json.dumps(meta), encoding="utf-8")
    out = tmp_path / "oof.json"
    run = subprocess.run([sys.executable, "-m", "bench.site_step_oof", "--reader", f"none={smoke}",
                          "--reader", f"step={step}:1", "--selector-from", str(smoke), "--limit", "8",
                          "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    data = json.loads(out.read_text(encoding="utf-8"))
    rows = data["rows"]
    assert {r["subset"] for r in rows if r["reader"] == "step"} <= {"fold1", "A", "multi_turn"}
    assert {r["subset"] for r in rows if r["reader"] == "none"} >= {"fold0", "fold1", "A"}
    assert all(r["outcome"] in ("correct", "wrong", "abstained", "refused", "answered", "unscored") for r in rows)
    assert "A, reader without fold 1" in data["report"]["step"] and "folds pooled" in data["report"]["none"]
    assert "| reader | subset |" in run.stdout
