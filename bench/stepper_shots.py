"""The Stepper's page as a student sees it: how tall each step's page is (in screens, with its
folds closed) at a desk (1440 x 900), a small desk and a projector (1024 x 768) and a phone
(390 x 844), and screenshots of steps 1, 8, 17 and 20 to look at.

    .venv/bin/python -m bench.stepper_shots [OUT_DIR]     (default /tmp/shots36)

Prints each size's median page height over the twenty steps (the main area's scrollHeight over
the viewport's height) and the blocks that make the tallest step tall; writes
OUT_DIR/step{N}_{W}x{H}.png (at 1024 x 768 in presenter mode).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.chromium import CHROMIUM, CHROMIUM_ARGS
from bench.local_server import LocalServer
from teaching.steps import N_STEPS

VIEWS = (
    ("desk", 1440, 900, ""),
    ("small_desk", 1024, 768, ""),
    ("projector", 1024, 768, "presenter=1"),
    ("phone", 390, 844, ""),
)
SHOTS = (1, 8, 17, 20)

# The page's height, and the blocks of the main area (the Stepper's own parts one level down)
# with where each starts and how tall it is.
_PROFILE = """
() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const top = main.getBoundingClientRect().top - main.scrollTop;
  const blocks = [...main.querySelectorAll(
    '.st-key-stepper_page > *, .st-key-stepper_page > * > *, .lnlab-walk > *')]
    .map(e => [e.className.baseVal ?? String(e.className), e.getBoundingClientRect()])
    .filter(([, r]) => r.height > 0)
    .map(([c, r]) => [c.slice(0, 60), Math.round(r.top - top), Math.round(r.height)]);
  return {height: main.scrollHeight, blocks};
}
"""


def measure(browser, base: str, out: Path, view: tuple) -> float:
    name, width, height, query = view
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.goto(f"{base}/stepper?{query}")
    page.wait_for_selector(".lnlab-heading", timeout=120_000)
    page.wait_for_timeout(1_500)
    heights, tallest = [], None
    for number in range(1, N_STEPS + 1):
        page.evaluate("(n) => window.__lnlabWalk.go(n)", number)
        page.wait_for_function(
            "(n) => document.querySelector('.lnlab-heading').innerText.startsWith(`Step ${n} of`)",
            arg=number,
        )
        page.wait_for_timeout(100)
        found = page.evaluate(_PROFILE)
        heights.append(found["height"])
        if tallest is None or found["height"] > tallest[1]["height"]:
            tallest = (number, found)
        if number in SHOTS and (name != "small_desk"):
            page.screenshot(path=str(out / f"step{number}_{width}x{height}.png"))
    median = statistics.median(heights)
    print(f"{name} {width}x{height}: median {median} px = {median / height:.2f} screens")
    print(f"  per step (screens): {[round(h / height, 2) for h in heights]}")
    print(f"  tallest, step {tallest[0]}:")
    for cls, start, tall in tallest[1]["blocks"]:
        print(f"    {start:6d} {tall:5d}  {cls}")
    page.context.close()
    return median / height


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/shots36")
    out.mkdir(parents=True, exist_ok=True)
    with LocalServer() as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        base = f"http://127.0.0.1:{server.port}"
        # A fresh server's first page can open before its pages are registered ("Page not
        # found"): one visit first, as the browser tests' warm-up does.
        warm = browser.new_page()
        warm.goto(f"{base}/stepper")
        warm.wait_for_selector(".lnlab-heading", timeout=120_000)
        warm.close()
        for view in VIEWS:
            measure(browser, base, out, view)
        browser.close()


if __name__ == "__main__":
    main()
