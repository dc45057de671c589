"""`eval retrieval|answers|consistency`: dispatch to the area that owns each evaluation."""

from __future__ import annotations

import argparse
import importlib

from bot.cli import CommandUnavailable
from bot.settings import Settings

_TARGETS = {
    "retrieval": "bot.cmd_retrieval:cmd_eval_retrieval",
    "answers": "bot.cmd_answer:cmd_eval_answers",
    "consistency": "bot.cmd_answer:cmd_eval_consistency",
}


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    """Run the evaluation named by ``args.what``."""
    module_name, func_name = _TARGETS[args.what].split(":")
    try:
        func = getattr(importlib.import_module(module_name), func_name)
    except (ImportError, AttributeError):
        raise CommandUnavailable(f"'eval {args.what}' is not available in this build yet.") from None
    return int(func(args, settings) or 0)
