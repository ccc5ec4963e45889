"""(4) Every page's server-side run time (AppTest) at default inputs and at its largest allowed
size, uncached (what a student waits for after changing an input) and cached (a rerun that
changes nothing), and the time to first paint of each page in Chromium."""

from __future__ import annotations

import logging
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from bench.results import ms, table, write_result, yes_no

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 5
# The heaviest input each page allows (see ui/caps.py): (shape kind, {control: value}, step).
LARGEST = {
    "home": ("tokens", {"b": 8, "l": 16, "d": 1024}),
    "inputs": ("rows", {"n": 32, "d": 1024}),
    "stepper": ("rows", {"n": 32, "d": 64}),
    "jacobian": ("vector", {"d": 512}),
    "gradcheck": ("rows", {"n": 8, "d": 512}),
    "audit": ("rows", {"n": 8, "d": 512}),
    "residual": ("rows", {"n": 32, "d": 32}),
    "batchnorm": ("rows", {"n": 16, "d": 1024}),
    "export": ("rows", {"n": 4, "d": 1024}),
}
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
]


def _app(page: str, size: tuple[str, dict] | None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    if size is not None:
        kind, controls = size
        at.radio(key="shape_kind").set_value(kind).run()
        for key, value in controls.items():
            at.number_input(key=key).set_value(value).run()
    if page == "stepper":
        at.session_state["step"] = 20  # the heaviest step: both merge points and two checks
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, f"{page}: {at.exception}"
    assert not at.error, f"{page} refused its largest size: {at.error[0].value}"
    return at


def server_side(page: str, size: tuple[str, dict] | None) -> dict[str, list[float]]:
    """Seconds per run, with st.cache_data cleared first ("uncached") and without ("cached")."""
    at = _app(page, size)
    runs: dict[str, list[float]] = {"uncached": [], "cached": []}
    for _ in range(ROUNDS):
        for mode in runs:
            if mode == "uncached":
                st.cache_data.clear()
            start = time.perf_counter()
            at.run()
            runs[mode].append(time.perf_counter() - start)
    return runs


def first_paint(pages: list[str]) -> dict[str, list[float]]:
    """Seconds from navigation to the end of the page's first script run, in Chromium."""
    from playwright.sync_api import sync_playwright

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "ui.launch", "--server.port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
                break
            except OSError:
                time.sleep(0.25)
        seconds: dict[str, list[float]] = {page: [] for page in pages}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
            )
            for _ in range(3):
                for page in pages:
                    context = browser.new_context(viewport={"width": 1440, "height": 900})
                    tab = context.new_page()
                    start = time.perf_counter()
                    tab.goto(f"{url}/{'' if page == 'home' else page}")
                    tab.wait_for_selector(
                        '[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=60_000
                    )
                    tab.wait_for_selector('[data-testid="stMain"] h1, [data-testid="stMain"] h3')
                    seconds[page].append(time.perf_counter() - start)
                    context.close()
            browser.close()
        return seconds
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> None:
    logging.disable(logging.WARNING)  # AppTest's bare-mode warnings
    rows, raw = [], {}
    for page, size in LARGEST.items():
        default, largest = server_side(page, None), server_side(page, size)
        raw[page] = {"default": default, "largest": largest, "largest_size": size}
        d_ms = statistics.median(default["uncached"]) * 1e3
        l_ms = statistics.median(largest["uncached"]) * 1e3
        kind, controls = size
        shape = " x ".join(str(v) for v in controls.values())
        rows.append(
            [
                page,
                ms(d_ms),
                ms(statistics.median(default["cached"]) * 1e3),
                yes_no(d_ms < 150),
                f"{kind} {shape}",
                ms(l_ms),
                ms(statistics.median(largest["cached"]) * 1e3),
                yes_no(l_ms < 1000),
            ]
        )
    paint = first_paint(list(LARGEST))
    raw["first_paint"] = paint
    paint_rows = [[page, ms(statistics.median(s) * 1e3)] for page, s in paint.items()]
    write_result(
        "pages",
        "4. Pages: server-side run time and first paint",
        order=4,
        text=(
            f"Median of {ROUNDS} runs of each page in AppTest (`bench/bench_pages.py`). "
            "*Uncached* clears `st.cache_data` first, as after a change of input; *cached* is "
            "a rerun that changes nothing. The largest size is the heaviest input the page's "
            "cap in `ui/caps.py` admits (the stepper at step 20). Targets: under 150 ms at "
            "defaults and under 1 s at the largest size, uncached. First paint: Chromium, "
            "fresh session, from navigation to the end of the page's first run at default "
            "inputs (median of 3)."
        ),
        tables=[
            table(
                [
                    "page",
                    "default ms",
                    "cached ms",
                    "< 150 ms",
                    "largest size",
                    "largest ms",
                    "cached ms",
                    "< 1 s",
                ],
                rows,
            ),
            table(["page", "first paint ms"], paint_rows),
        ],
        raw=raw,
    )


if __name__ == "__main__":
    main()
