"""Entry point: ``python -m bot``."""

import sys

from bot.cli import main

if __name__ == "__main__":
    sys.exit(main())
