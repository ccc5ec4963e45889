"""How the lab drives a real browser: Debian's Chromium by path (Playwright never downloads
one here) and the flags that keep it from any traffic of its own, for the browser tests
(tests/browser) and the first-paint benchmark (bench/bench_pages.py)."""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
