"""The dialogue evaluation (bench/dialogues.py): how a turn is scored, and a real play of two dialogues through
ChatService with the learned reader on the crawled sample site."""

from __future__ import annotations

import pytest

from bench.dialogues import load_dialogues, markdown, metrics, score_turn
from generation.types import Answer
from handlers.chat import Reply


def _answer(text: str, abstained: bool = False) -> Reply:
    answer = Answer(answer=text, abstained=abstained, sources=(), confidence=0.5, iterations=0,
                    stop_reason="ABSTAIN" if abstained else "READER_SPAN", latency_ms=1.0)
    return Reply(text, kind="answer", answer=answer)


def test_an_answer_turn_needs_every_gold_span_and_no_refusal() -> None:
    turn = {"user": "kaprodi siapa", "expect": "answer", "answers": ["Supriyono", "M.Kom"]}
    assert score_turn(turn, _answer("Ketua prodi: Supriyono, M.Kom. [1]")) == (True, "")
    right, why = score_turn(turn, _answer("Ketua prodi: Supriyono [1]"))
    assert not right and "M.Kom" in why
    assert score_turn(turn, _answer("Maaf, belum ada informasinya.", abstained=True)) == (False, "refused")
    assert score_turn(turn, Reply("Halo!", kind="smalltalk"))[0] is False


def test_a_small_talk_turn_answered_with_page_content_is_named_so() -> None:
    turn = {"user": "makasih ya", "expect": "smalltalk"}
    assert score_turn(turn, Reply("Sama-sama!", kind="smalltalk")) == (True, "")
    assert score_turn(turn, _answer("2023. [1]")) == (False, "answered with page content")
    right, why = score_turn(turn, _answer("Maaf, belum ada informasinya.", abstained=True))
    assert not right and "refused" in why


def test_refusals_and_ask_backs() -> None:
    refuse = {"user": "password wifi?", "expect": "refuse"}
    assert score_turn(refuse, _answer("Maaf.", abstained=True)) == (True, "")
    assert score_turn(refuse, _answer("Passwordnya 1234"))[0] is False
    ask = {"user": "emailnya?", "expect": "askback", "candidates": ["Aisyah", "Budi"]}
    assert score_turn(ask, _answer("a@b.c"))[0] is False
    assert score_turn(ask, Reply("Yang mana: Aisyah atau Budi?", kind="askback")) == (True, "")
    assert score_turn(ask, Reply("Yang mana?", kind="askback"))[1] == "asked back without naming a candidate"


def test_the_report_states_targets_from_the_counts() -> None:
    from bench.dialogues import TurnResult

    results = [TurnResult("D1", 1, "halo", "smalltalk", "smalltalk", None, "Halo!", True),
               TurnResult("D1", 2, "kaprodi?", "answer", "answer", False, "Supriyono", True),
               TurnResult("D2", 1, "makasih", "smalltalk", "answer", False, "2023.", False,
                          "answered with page content")]
    m = metrics(results)
    assert m["right"] == 2 and m["smalltalk_handled"] == 1 and m["smalltalk_with_content"] == 1
    text = markdown(m, results, answerer="reader", seconds=1.0)
    assert "1/2 (50.0%); target ≥ 90% → **missed**" in text
    assert "2/3 (66.7%); target ≥ 80% → **missed**" in text and "page content: 1; target 0 → **missed**" in text
    assert "- Commit " in text and "- Machine: " in text  # the section names its own commit and machine


@pytest.mark.integration
def test_two_dialogues_play_through_chat_service_on_the_sample_site() -> None:
    from bench.dialogues import run

    m = run(answerer="reader", limit=2)
    expected_turns = sum(len(d["turns"]) for d in load_dialogues()[:2])
    assert m["turns"] == expected_turns and m["dialogues"] == 2
    assert sum(v["turns"] for v in m["per_expect"].values()) == expected_turns


def test_the_subject_ablation_reports_what_the_counts_say() -> None:
    from bench.dialogues import TurnResult, ablation_markdown

    on = [TurnResult("D1", 1, "kaprodi?", "answer", "answer", False, "Supriyono", True),
          TurnResult("D1", 2, "emailnya?", "askback", "askback", False, "Yang mana?", True),
          TurnResult("D2", 1, "ruangnya?", "answer", "answer", True, "Maaf", False, "refused")]
    off = [TurnResult("D1", 1, "kaprodi?", "answer", "answer", False, "Supriyono", True),
           TurnResult("D1", 2, "emailnya?", "askback", "answer", False, "a@b", False, "answer instead of asking back"),
           TurnResult("D2", 1, "ruangnya?", "answer", "answer", False, "B.1", True)]
    text = ablation_markdown(on, off, answerer="rules")
    assert "| **all** | 3 | 2/3 (66.7%) | 2/3 (66.7%) |" in text
    assert "Turns right only with the layer: 1; turns right only without it: 1." in text
    assert "| D1 | 2 | emailnya? | askback | right | answer instead of asking back |" in text
    assert "| D2 | 1 | ruangnya? | answer | refused | right |" in text
