"""(4) Every page's server-side run time (AppTest) in every mode at its largest allowed input,
uncached (what a student waits for after changing an input) and cached (a rerun that changes
nothing), its default inputs for comparison, and the time to first paint of each page in
Chromium. The pages come from app.py, the sizes from ui/server/caps.py and the sidebar's limits."""

from __future__ import annotations

import logging
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from bench.chromium import CHROMIUM, CHROMIUM_ARGS
from bench.lab_pages import lab_pages
from bench.local_server import LocalServer
from bench.results import ms, table, write_result, yes_no
from deploy.processes import HOST
from ln_core.bugs import Bug
from teaching.steps import N_STEPS
from ui.entry.limits import SIDEBAR
from ui.server.caps import CAPS

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 3
TARGET_S = 1.0
Action = Callable[[AppTest], None]


def _state(**values) -> Action:
    def apply(at: AppTest) -> None:
        for key, value in values.items():
            at.session_state[key] = value

    return apply


def _toggle(label: str) -> Action:
    def apply(at: AppTest) -> None:
        next(t for t in at.toggle if t.label.startswith(label)).set_value(True)

    return apply


# What a student can switch on each page besides the sidebar's inputs; every page also runs
# in float32. A page not listed has one mode.
MODES: dict[str, dict[str, Action]] = {
    "inputs": {f"dout {k}": _state(upstream=k) for k in ("random", "ones", "one_hot", "loss")},
    "stepper": {
        **{f"step {n}": _state(step=n) for n in range(1, N_STEPS + 1)},
        f"step {N_STEPS}, quiz": _state(step=N_STEPS, quiz=True),
        f"step {N_STEPS}, presenter": _state(step=N_STEPS, presenter=True),
    },
    "jacobian": {"J": _state(), "three paths": _toggle("Show the three paths")},
    "gradcheck": {f"bug {b.value}": _state(bug=b.value) for b in Bug},
    "batchnorm": {f"{k}": _state(norm_kind=k) for k in ("layer", "batch", "rms")},
    "derive": {
        "empty (the page's first screen)": _state(),
        "a right dx": _state(derive_formula="rstd (dxhat - mean(dxhat) - x̂ mean(dxhat x̂))"),
        "a wrong dx (every known mistake tried)": _state(
            derive_formula="1/(σ+ε) (dxhat - mean(dxhat) - x̂ mean(dxhat x̂))"
        ),
        "a wrong dx no slip makes (every slip and pair tried)": _state(
            derive_formula="rstd (dxhat - mean(dxhat) - 1.3 x̂ mean(dxhat x̂))"
        ),
        "two slips (the 2 lost, dμ not over N)": _state(
            derive_formula="dxhat rstd + dvar (x−μ)/N + dmu"
        ),
        "the longest formula (199 parts)": _state(derive_formula=" + ".join(["x̂ dy"] * 50)),
    },
}


def largest(page: str) -> dict[str, int | str]:
    """The sidebar controls for the largest x a page admits: its cap, else the sidebar's limit."""
    cap = CAPS.get(page)
    d_max, n_max = SIDEBAR["d"].high, SIDEBAR["n"].high
    if cap is None:
        return {"shape_kind": "tokens", "b": SIDEBAR["b"].high, "l": SIDEBAR["l"].high, "d": d_max}
    n = n_max if cap.max_entries is None else min(n_max, cap.max_entries // cap.max_d)
    return {"shape_kind": "rows", "n": n, "d": cap.max_d}


def modes(page: str) -> dict[str, Action]:
    own = MODES.get(page, {"default": _state()})
    return {**own, "float32": _state(dtype="float32")}


def _app(script: str, controls: dict[str, int | str] | None, mode: Action) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    for key, value in (controls or {}).items():
        # Sidebar widgets are views of their state keys (ui.session.state.bound): w_<key>_.
        if key == "shape_kind":
            at.radio(key=f"w_{key}_").set_value(value).run()
        else:
            at.text_input(key=f"w_{key}_").input(str(value)).run()
    at.switch_page(script).run()
    mode(at)
    at.run()
    assert not at.exception, f"{script}: {at.exception}"
    assert not at.error, f"{script} refused its input: {at.error[0].value}"
    return at


def server_side(script: str, controls: dict | None, mode: Action) -> dict[str, float]:
    """Median seconds per run with every cache cleared first ("uncached") and without."""
    at = _app(script, controls, mode)
    runs: dict[str, list[float]] = {"uncached": [], "cached": []}
    for _ in range(ROUNDS):
        for kind in runs:
            if kind == "uncached":
                st.cache_data.clear()
                st.cache_resource.clear()
            start = time.perf_counter()
            at.run()
            runs[kind].append(time.perf_counter() - start)
    return {kind: statistics.median(seconds) for kind, seconds in runs.items()}


def first_paint(pages: list[str]) -> dict[str, list[float]]:
    """Seconds from navigation to the end of the page's first script run, in Chromium."""
    from playwright.sync_api import sync_playwright

    seconds: dict[str, list[float]] = {page: [] for page in pages}
    with LocalServer(launcher=True) as server, sync_playwright() as playwright:
        url = f"http://{HOST}:{server.port}"
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for _ in range(3):
            for page in pages:
                context = browser.new_context(viewport={"width": 1440, "height": 900})
                tab = context.new_page()
                start = time.perf_counter()
                tab.goto(f"{url}/{page}")
                tab.wait_for_selector(
                    '[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=60_000
                )
                tab.wait_for_selector('[data-testid="stMain"] h1, [data-testid="stMain"] h3')
                seconds[page].append(time.perf_counter() - start)
                context.close()
        browser.close()
    return seconds


def _size(controls: dict[str, int | str]) -> str:
    dims = [str(v) for k, v in controls.items() if k != "shape_kind"]
    return f"{controls['shape_kind']} {' x '.join(dims)}"


def main() -> None:
    logging.disable(logging.WARNING)  # AppTest's bare-mode warnings
    load = os.getloadavg()[0]
    pages = lab_pages()
    default_rows, mode_rows, raw = [], [], {}
    for page in pages:
        default = server_side(page.script, None, modes(page.name)[next(iter(modes(page.name)))])
        default_rows.append([page.name, ms(default["uncached"] * 1e3), ms(default["cached"] * 1e3)])
        controls = largest(page.name)
        raw[page.name] = {"default": default, "largest_size": controls, "modes": {}}
        for mode, action in modes(page.name).items():
            seconds = server_side(page.script, controls, action)
            raw[page.name]["modes"][mode] = seconds
            print(page.name, mode, {k: round(v * 1e3) for k, v in seconds.items()}, flush=True)
            mode_rows.append(
                [
                    page.name,
                    mode,
                    _size(controls),
                    ms(seconds["uncached"] * 1e3),
                    ms(seconds["cached"] * 1e3),
                    yes_no(seconds["uncached"] < TARGET_S),
                ]
            )
    paint = first_paint([p.url_path for p in pages])
    raw["first_paint"] = paint
    paint_rows = [[page or "home", ms(statistics.median(s) * 1e3)] for page, s in paint.items()]
    slowest = max(
        max(m["uncached"] for m in r["modes"].values()) for r in raw.values() if "modes" in r
    )
    write_result(
        "pages",
        "4. Pages: server-side run time in every mode at the cap, and first paint",
        order=4,
        text=(
            f"Median of {ROUNDS} runs of each page in AppTest (`bench/bench_pages.py`; load "
            f"average {load:.1f} at the start on {os.cpu_count()} cores), pages "
            "read from `app.py`. *Uncached* clears `st.cache_data` and `st.cache_resource` "
            "first, as after a change of input; *cached* is a rerun that changes nothing. "
            "Every mode (the page's own switches, and float32) runs at the largest input the "
            "page admits: its cap in `ui/server/caps.py`, or the sidebar's largest shape for a "
            f"page without one. Target: under 1 s uncached in every mode; slowest here "
            f"{ms(slowest * 1e3)} ms. First paint: Chromium, fresh session, from navigation to "
            "the end of the page's first run at default inputs (median of 3)."
        ),
        tables=[
            table(["page", "default ms", "cached ms"], default_rows),
            table(["page", "mode", "largest size", "ms", "cached ms", "< 1 s"], mode_rows),
            table(["page", "first paint ms"], paint_rows),
        ],
        raw=raw,
    )
    if slowest >= TARGET_S:
        sys.exit(1)


if __name__ == "__main__":
    main()
