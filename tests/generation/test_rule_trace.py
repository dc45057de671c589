"""Every rule that changes a decision says so in the answer trace (issue 30): the follow-up rewrite names the rule
that decided (``FollowUp.rule``), the query normaliser the rules that fired, and ``ask --json`` shows both on the
"rewrite" step. Naming a rule changes nothing: the rewritten query is what it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generation.refine import FOLLOWUP_RULES, rewrite_followup
from storage.models import Message

ROOT = Path(__file__).resolve().parents[2]


def _ask(followup: str, *turns: tuple[str, str]):
    history: list[Message] = []
    for user, reply in turns:
        history += [Message("user", user), Message("assistant", reply)]
    return rewrite_followup(followup, history)


KAPRODI = ("siapa ketua prodi informatika?", "Ketua Program Studi Informatika adalah Rina Wulandari, M.T.")


@pytest.mark.parametrize(("followup", "turns", "rule", "rewritten"), [
    ("emailnya?", [KAPRODI], "possessive", True),
    ("beliau ngajar apa?", [KAPRODI], "pronoun_person", True),
    ("yang 3 SKS saja?", [("mata kuliah semester 5 apa saja?", "Basis Data, Jaringan Komputer.")], "narrowing", True),
    ("kalau semester genap?", [("jadwal UAS semester ganjil kapan?", "UAS semester ganjil 10 Januari.")],
     "switch", True),
    ("kalau KKN?", [("magang berapa SKS?", "Magang 4 SKS.")], "switch", True),  # "KKN berapa SKS?"
    ("kalau KKN syaratnya apa?", [("magang berapa SKS?", "Magang 4 SKS.")], "switch_new_subject", True),
    ("ada yang lain?", [("Apa saja klub di kampus?", "Ada klub KOPI dan HMX.")], "alternative", True),
    ("syarat beasiswa KIP kuliah untuk mahasiswa baru apa saja?", [KAPRODI], "not_followup", False),
    ("emailnya?", [], "no_history", False),
])
def test_the_followup_rewrite_names_the_rule_that_decided(followup, turns, rule, rewritten) -> None:
    r = _ask(followup, *turns)
    assert (r.rule, r.rewritten) == (rule, rewritten), r
    assert r.rule.split("+")[0] in FOLLOWUP_RULES


def test_an_alternative_after_a_narrowing_names_both() -> None:
    r = _ask("ada lagi yang 3 SKS?", ("mata kuliah semester 5 apa saja?", "Basis Data (IF-301), Jaringan (IF-302)."))
    assert r.rewritten and r.rule.endswith("+alternative") and r.rule.split("+")[0] in FOLLOWUP_RULES, r


def test_the_rule_is_only_a_label() -> None:
    """Naming the rule leaves the rewrite as it was: "emailnya?" after a who-question still carries the person the
    reply named (tests/generation/test_followups.py checks the rewritten queries of every class)."""
    r = _ask("emailnya?", KAPRODI)
    assert {"email", "rina", "wulandari"} <= {w.strip("?,.").lower() for w in r.query.split()}
    assert r.about_subject and r.previous == KAPRODI[0]


# --- ask --json on the sample site ---------------------------------------------------------------------------------

def _env(data_dir: Path, site: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "WHATSAPP_", "SITE_", "REDIS_"))}
    env.update({"DATA_DIR": str(data_dir), "SITE_SEEDS": f"{site}/", "CRAWL_ALLOW_PRIVATE_NETWORKS": "true",
                "CRAWL_DELAY_SECONDS": "0", "PYTHONPATH": str(ROOT), "ANSWERER": "rules"})
    return env


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True, env=env, timeout=1800,
                          cwd=env["DATA_DIR"])


@pytest.mark.slow
@pytest.mark.integration
def test_ask_json_shows_the_rules_that_fired(tmp_path: Path, sample_site: str) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    env = _env(data_dir, sample_site)
    assert _cli(env, "reindex", "--json").returncode == 0
    result = _cli(env, "ask", "kalo syarat beasiswa gimana dong kak?", "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    rewrite = next(s for s in json.loads(result.stdout)["trace"]["steps"] if s["step"] == "rewrite")
    fired = {(r["rule"], r["from"], r["to"]) for r in rewrite["rules"]}
    assert {("colloquial", "kalo", "kalau"), ("colloquial", "gimana", "bagaimana")} <= fired, rewrite
    assert {("filler", "dong", ""), ("filler", "kak", "")} <= fired, rewrite
    assert rewrite["followup"] is False and rewrite["followup_rule"] == "no_history"
    assert rewrite["query"].startswith("kalau syarat beasiswa bagaimana")
    assert isinstance(rewrite["anchor_rules"], list)
