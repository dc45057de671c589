"""Multi-turn dialogues, played as a student would (``tests/data/eval/dialogues.jsonl``): every turn through the
ChatService that every channel uses (small talk, commands, the answer pipeline, the conversation window), with the
bot's own replies as the history, each turn scored against what it expects.

A turn is right when it gets what it expects:

- ``answer``: a reply that is not a refusal and contains every gold span (``generation.evaluation.contains_span``);
- ``smalltalk``: a small-talk reply (``Reply.kind == "smalltalk"``); a small-talk turn answered with page content (an
  answer that is not a refusal) is counted apart, because it is the worst way to be wrong;
- ``askback``: an ask-back (``Reply.kind == "askback"``) whose choices (or text) name at least one of the candidates;
- ``refuse``: a refusal (the pipeline abstained).

``python -m bench.dialogues`` builds a fresh index of the bundled sample site, plays every dialogue with the answerer
of the settings (``--answerer reader`` or ``rules`` overrides it) and writes its section of docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.eval_sets import DIALOGUES_SET, load_items

ROOT = Path(__file__).resolve().parents[1]
EXPECTS = ("answer", "smalltalk", "askback", "refuse")
TARGETS = {"smalltalk_handled": 0.90, "turns_right": 0.80, "smalltalk_with_content": 0}  # the bar


@dataclass
class TurnResult:
    dialogue: str
    turn: int
    user: str
    expect: str
    kind: str  # the Reply's kind
    abstained: bool | None
    reply: str
    right: bool
    why: str = ""
    choices: list[str] = field(default_factory=list)


def load_dialogues(path: Path = DIALOGUES_SET) -> list[dict[str, Any]]:
    return load_items(path)


def score_turn(turn: dict[str, Any], reply: Any) -> tuple[bool, str]:
    """(right, why) for one turn's ``Reply`` against what the turn expects."""
    from generation.evaluation import contains_span

    expect = turn["expect"]
    answer = getattr(reply, "answer", None)
    abstained = bool(answer.abstained) if answer is not None else None
    text = str(getattr(reply, "text", "") or "")
    if expect == "smalltalk":
        if reply.kind == "smalltalk":
            return True, ""
        return False, "answered with page content" if reply.kind == "answer" and abstained is False else \
            f"{reply.kind}{' (refused)' if abstained else ''} instead of small talk"
    if expect == "askback":
        if reply.kind != "askback":
            return False, f"{reply.kind}{' (refused)' if abstained else ''} instead of asking back"
        offered = " ".join(list(getattr(reply, "choices", ()) or ()) + [text])
        named = [c for c in turn.get("candidates") or [] if contains_span(offered, c)]
        return (True, "") if named else (False, "asked back without naming a candidate")
    if expect == "refuse":
        if reply.kind == "answer" and abstained:
            return True, ""
        return False, "answered instead of refusing" if reply.kind == "answer" else f"{reply.kind} instead of refusing"
    if reply.kind != "answer":
        return False, f"{reply.kind} instead of an answer"
    if abstained:
        return False, "refused"
    missing = [g for g in turn.get("answers") or [] if not contains_span(text, str(g))]
    return (False, "missing " + ", ".join(repr(m) for m in missing)) if missing else (True, "")


async def play(service: Any, dialogues: Sequence[dict[str, Any]], *, progress: bool = True) -> list[TurnResult]:
    """Every dialogue through ``service`` (a ``handlers.chat.ChatService``), one user per dialogue."""
    from handlers.chat import UserRef

    results: list[TurnResult] = []
    for n, dialogue in enumerate(dialogues, 1):
        user = UserRef("eval", str(dialogue["id"]))
        for t, turn in enumerate(dialogue["turns"], 1):
            reply = await service.handle(user, str(turn["user"]))
            right, why = score_turn(turn, reply)
            answer = getattr(reply, "answer", None)
            results.append(TurnResult(
                dialogue=str(dialogue["id"]), turn=t, user=str(turn["user"]), expect=str(turn["expect"]),
                kind=str(reply.kind), abstained=bool(answer.abstained) if answer is not None else None,
                reply=str(reply.text), right=right, why=why, choices=list(getattr(reply, "choices", ()) or ())))
        if progress:
            done = [r for r in results if r.dialogue == str(dialogue["id"])]
            print(f"  [{n}/{len(dialogues)}] {dialogue['id']} {sum(r.right for r in done)}/{len(done)} right",
                  file=sys.stderr, flush=True)
    return results


def metrics(results: Sequence[TurnResult]) -> dict[str, Any]:
    per = {e: [r for r in results if r.expect == e] for e in EXPECTS}
    small = per["smalltalk"]
    return {
        "turns": len(results),
        "right": sum(r.right for r in results),
        "per_expect": {e: {"turns": len(rs), "right": sum(r.right for r in rs)} for e, rs in per.items()},
        "smalltalk_handled": sum(r.kind == "smalltalk" for r in small),
        "smalltalk_with_content": sum(r.why == "answered with page content" for r in small),
        "dialogues": len({r.dialogue for r in results}),
        "dialogues_all_right": sum(all(r.right for r in results if r.dialogue == d)
                                   for d in {r.dialogue for r in results}),
    }


def _share(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.1f}%)" if n else "0/0"


def machine() -> str:
    from bench.__main__ import machine as measured_on

    return measured_on()


def markdown(m: dict[str, Any], results: Sequence[TurnResult], *, answerer: str, seconds: float,
             misses: int = 20) -> str:
    n_small = m["per_expect"]["smalltalk"]["turns"]
    handled = m["smalltalk_handled"] / n_small if n_small else 0.0
    right = m["right"] / m["turns"] if m["turns"] else 0.0
    lines = [
        "## Dialogues (multi-turn, as students chat)",
        "",
        f"`tests/data/eval/dialogues.jsonl`: {m['dialogues']} dialogues, {m['turns']} turns, written blind before the "
        f"code that handles them. Each turn went through ChatService (answerer `{answerer}`), with the bot's own "
        f"replies as the history, in {seconds:.0f} s. Regenerate with `python -m bench.dialogues`.",
        "",
        machine().rstrip(),  # this section may be newer than the report around it: its own commit and machine
        "",
        "| expected | turns | right |",
        "|---|---|---|",
        *[f"| {e} | {v['turns']} | {_share(v['right'], v['turns'])} |" for e, v in m["per_expect"].items()],
        f"| **all** | {m['turns']} | {_share(m['right'], m['turns'])} |",
        "",
        f"- Small-talk turns handled as small talk: {_share(m['smalltalk_handled'], n_small)}; target ≥ 90% → "
        f"**{'met' if handled >= TARGETS['smalltalk_handled'] else 'missed'}**.",
        f"- All turns right: {_share(m['right'], m['turns'])}; target ≥ 80% → "
        f"**{'met' if right >= TARGETS['turns_right'] else 'missed'}**.",
        f"- Small-talk turns answered with page content: {m['smalltalk_with_content']}; target 0 → "
        f"**{'met' if m['smalltalk_with_content'] == 0 else 'missed'}**.",
        f"- Dialogues with every turn right: {_share(m['dialogues_all_right'], m['dialogues'])}.",
        "",
    ]
    wrong = [r for r in results if not r.right]
    if wrong:
        reasons: dict[str, int] = {}
        for r in wrong:
            key = f"{r.expect}: {r.why.split(' ')[0] if r.why.startswith('missing') else r.why}"
            reasons[key] = reasons.get(key, 0) + 1
        lines += ["Why turns went wrong (expected: what happened, turns):", "",
                  *[f"- {k}: {v}" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])], "",
                  f"The first {min(misses, len(wrong))} wrong turns:", "",
                  "| dialogue | turn | message | expected | got |", "|---|---|---|---|---|"]
        for r in wrong[:misses]:
            got = " ".join(r.reply.split())[:90].replace("|", "\\|")
            lines.append(f"| {r.dialogue} | {r.turn} | {r.user.replace('|', '/')} | {r.expect} | {r.why}: {got} |")
        lines.append("")
    return "\n".join(lines)


def _verdict(r: TurnResult) -> str:
    return ("right" if r.right else r.why).replace("|", "\\|")


def ablation_markdown(on: Sequence[TurnResult], off: Sequence[TurnResult], *, answerer: str) -> str:
    """The same dialogues with the follow-up subject layer (generation/subjects.py) on and off: per expected kind,
    and the turns whose verdict differs. Every sentence follows from the counts."""
    m_on, m_off = metrics(on), metrics(off)
    changed = [(a, b) for a, b in zip(on, off, strict=True) if a.right != b.right]
    gained = [a for a, b in changed if a.right]
    lost = [a for a, b in changed if not a.right]
    lines = [
        f"## Dialogues: the follow-up subject layer on and off ({answerer})",
        "",
        f"The dialogues above played twice through ChatService (answerer `{answerer}`): with `PipelineConfig."
        f"follow_subjects` on (the default: a follow-up takes its subject from the entities the last reply named, "
        f"asks back between two or three, or asks the study program) and off (the word-level rewrite alone).",
        "",
        "| expected | turns | right, on | right, off |",
        "|---|---|---|---|",
        *[f"| {e} | {m_on['per_expect'][e]['turns']} | {m_on['per_expect'][e]['right']} | "
          f"{m_off['per_expect'][e]['right']} |" for e in EXPECTS],
        f"| **all** | {m_on['turns']} | {_share(m_on['right'], m_on['turns'])} | "
        f"{_share(m_off['right'], m_off['turns'])} |",
        "",
        f"Turns right only with the layer: {len(gained)}; turns right only without it: {len(lost)}.",
        "",
    ]
    if changed:
        lines += ["| dialogue | turn | message | expected | on | off |", "|---|---|---|---|---|---|"]
        for a, b in changed:
            lines.append(f"| {a.dialogue} | {a.turn} | {a.user.replace('|', '/')} | {a.expect} | {_verdict(a)} | "
                         f"{_verdict(b)} |")
        lines.append("")
    return "\n".join(lines)


def run(answerer: str | None = None, limit: int | None = None, out: Path | None = None,
        raw: Path | None = None, ablate_subjects: bool = False) -> dict[str, Any]:
    from bench.evaluation import build_fresh_index, site_settings
    from bot import wiring
    from bot.sample_site import SampleSite

    dialogues = load_dialogues()[:limit] if limit else load_dialogues()
    with tempfile.TemporaryDirectory(prefix="prodi-dialogues-") as tmp, SampleSite() as site:
        extra = {"answerer": answerer} if answerer else {}
        settings = site_settings(site.base_url, Path(tmp) / "data", **extra)
        manager, _, _ = build_fresh_index(settings)

        async def go() -> tuple[list[TurnResult], float, list[TurnResult]]:
            pool = wiring.build_llm_pool(settings)
            pipeline = wiring.build_pipeline(settings, index_manager=manager, pool=pool)

            def service() -> Any:  # fresh conversation stores: every play starts with empty histories
                stores = wiring.build_channel_stores(settings, in_memory=True)
                return wiring.build_chat_service(settings, pipeline, stores, rate_limit_per_minute=1_000_000)

            started = time.perf_counter()
            try:
                played = await play(service(), dialogues)
                seconds = time.perf_counter() - started
                off: list[TurnResult] = []
                if ablate_subjects:
                    pipeline.config = dataclasses.replace(pipeline.config, follow_subjects=False)
                    off = await play(service(), dialogues)
                return played, seconds, off
            finally:
                await asyncio.get_running_loop().run_in_executor(None, pool.close)

        results, seconds, without = asyncio.run(go())
    m = metrics(results)
    name = settings.answers.answerer
    text = markdown(m, results, answerer=name, seconds=seconds)
    if out is not None:
        from bot.cmd_answer import upsert_section

        upsert_section(out, f"dialogues-{name}", text)
        if without:
            upsert_section(out, f"dialogues-{name}-subjects", ablation_markdown(results, without, answerer=name))
    if raw is not None:
        raw.write_text("".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in results), encoding="utf-8")
    print(text)
    return m


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.dialogues", description=__doc__.split("\n\n")[0])
    parser.add_argument("--answerer", choices=("rules", "reader"), help="override ANSWERER")
    parser.add_argument("--limit", type=int, help="only the first N dialogues (a smoke run; nothing is written)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "evaluation.md"))
    parser.add_argument("--raw", help="also write every turn's result here (JSON lines)")
    parser.add_argument("--ablate-subjects", action="store_true",
                        help="play the dialogues again with the follow-up subject layer off and report both")
    args = parser.parse_args(argv)
    run(args.answerer, args.limit, None if args.limit else Path(args.out), Path(args.raw) if args.raw else None,
        ablate_subjects=args.ablate_subjects)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
