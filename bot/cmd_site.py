"""`python -m bot sample-site`: serve the bundled sample prodi website in the foreground."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from bot.settings import Settings

__all__ = ["cmd_sample_site"]


def cmd_sample_site(args: argparse.Namespace, settings: Settings) -> int:
    """Serve the sample site on ``--host``/``--port`` (``--root`` serves another copy) until interrupted."""
    from bot.sample_site import SampleSite, bundled_site_root

    root = Path(args.root) if getattr(args, "root", None) else bundled_site_root()
    if not (root / "index.html").is_file():
        print(f"error: {root} has no index.html; pass --root a copy of {bundled_site_root()}", file=sys.stderr)
        return 2
    site = SampleSite(root=root, port=args.port, host=args.host)
    try:
        site.start()
    except OSError as error:
        print(f"error: cannot listen on {args.host}:{args.port} ({error.strerror or error}); "
              "choose another port with --port, or --port 0 for a free one", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"url": site.base_url + "/", "root": str(root), "port": site.port}), flush=True)
    else:
        print(f"Sample prodi site on {site.base_url}/ (serving {root}); press Ctrl+C to stop.", flush=True)
    def _terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        site.close()
    return 0
