"""Browser tests: Debian's Chromium driven through Playwright.

The admin pages' screenshots (docs/img/admin-*.png, shown in docs/admin_insights.md and docs/deploy.md) are
written to docs/img/ only when ``UPDATE_SCREENSHOTS=1`` is set, so that ``make test`` leaves a checkout clean;
otherwise they go to a scratch folder (the tests still take them: taking one exercises the page at that width)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


def screenshot_dir() -> Path:
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        return DOCS_IMG
    scratch = Path(tempfile.gettempdir()) / "prodi-bot-screenshots"
    scratch.mkdir(parents=True, exist_ok=True)
    return scratch
