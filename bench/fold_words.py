"""Words above the fold: how many words each page's first screen holds, in Chromium.

    .venv/bin/python -m bench.fold_words [--width 1440 --height 900] [--shots DIR] [--page NAME]

A fresh session per page at default inputs; once the page's script has finished, every text
the student can see in the main area within the first screen is counted (the sidebar is left
out: it is the same on every page). A word is a run of characters between spaces; a typeset
formula counts as one word (its MathML copy, hidden from sight, is not counted); a table
drawn on a canvas (st.dataframe, st.data_editor) counts nothing, only its toolbar. Closed
expanders, popovers and tabs not chosen hold no visible text and count nothing. With --shots,
each first screen is saved as <DIR>/fold_<width>x<height>_<page>.png. --page (repeatable)
counts only the pages named (the script's name: stepper, jacobian, ...); the Stepper opens at
its first step.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.chromium import CHROMIUM, CHROMIUM_ARGS
from bench.lab_pages import lab_pages
from bench.local_server import LocalServer
from deploy.processes import HOST

_SETTLED = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return app !== null && app.getAttribute("data-test-script-state") === "notRunning"
    && document.querySelector('[data-testid="stSkeleton"]') === null
    && document.querySelector('[data-stale="true"]') === null;
}
"""
COUNT_WORDS = """
() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const fold = window.innerHeight;
  const seen = (rect) => rect.width > 0 && rect.height > 0 && rect.top < fold && rect.bottom > 0;
  let words = 0;
  for (const formula of main.querySelectorAll(".katex")) {
    if (seen(formula.getBoundingClientRect())) words += 1;
  }
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest(".katex") || !parent.checkVisibility()) continue;
    const text = node.textContent.trim();
    if (!text) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    if ([...range.getClientRects()].some(seen)) words += text.split(/\\s+/).length;
  }
  return words;
}
"""


def settle(tab) -> None:
    """Wait for the page's run to end, and for charts and fonts to be drawn."""
    tab.wait_for_function(_SETTLED, timeout=60_000, polling=100)
    tab.wait_for_timeout(1_500)
    tab.wait_for_function(_SETTLED, timeout=60_000, polling=100)


def count(
    width: int, height: int, shots: Path | None, only: list[str] | None = None
) -> dict[str, int]:
    """Words above the fold per page title, at this window size (of the pages `only` names,
    or of every page)."""
    from playwright.sync_api import sync_playwright

    words = {}
    with LocalServer(launcher=True) as server, sync_playwright() as playwright:
        url = f"http://{HOST}:{server.port}"
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for page in lab_pages():
            if only and page.name not in only:
                continue
            context = browser.new_context(viewport={"width": width, "height": height})
            tab = context.new_page()
            tab.goto(f"{url}/{page.url_path}")
            settle(tab)
            words[page.title] = tab.evaluate(COUNT_WORDS)
            if shots is not None:
                shots.mkdir(parents=True, exist_ok=True)
                tab.screenshot(path=str(shots / f"fold_{width}x{height}_{page.name}.png"))
            context.close()
        browser.close()
    return words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=1440)
    parser.add_argument("--height", type=int, default=900)
    parser.add_argument("--shots", type=Path, default=None)
    parser.add_argument("--page", action="append", default=None)
    args = parser.parse_args()
    words = count(args.width, args.height, args.shots, args.page)
    print(f"| page | words above the fold at {args.width}x{args.height} |")
    print("|---|---:|")
    for title, n in words.items():
        print(f"| {title} | {n} |")
    print(f"| total | {sum(words.values())} |")


if __name__ == "__main__":
    main()
