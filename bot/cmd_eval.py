"""`eval retrieval|answers|consistency`: dispatch to the area that owns each evaluation."""

from __future__ import annotations

import argparse

from bot.settings import Settings


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    """Run the evaluation named by ``args.what``."""
    if args.what == "retrieval":
        from bot.cmd_retrieval import cmd_eval_retrieval as run
    elif args.what == "answers":
        from bot.cmd_answer import cmd_eval_answers as run
    else:  # argparse allows only these three
        from bot.cmd_answer import cmd_eval_consistency as run
    return int(run(args, settings) or 0)
