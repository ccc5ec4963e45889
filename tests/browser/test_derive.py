"""Check your derivation in a real browser: the formula as the lab read it is typeset by
KaTeX, the verdict follows, and a formula the lab cannot read is named at its place. The
screenshots (right, wrong, unparsable at 1440x900 and 390x844) go to screenshots/."""

from __future__ import annotations

from urllib.parse import urlencode

import lnlab_browser_kit as kit
import pytest

pytestmark = pytest.mark.browser

FORMULAS = {
    "right": ("rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))", "Correct"),
    "wrong": ("1/√(σ²+ε) * (dxhat - mean(dxhat))", "Wrong"),
    "unparsable": ("rstd * (dxhat - mean(dxhat] + foo", None),
}


@pytest.mark.parametrize("size", [(1440, 900), (390, 844)], ids=["desktop", "phone"])
def test_right_wrong_and_unparsable_formulas(page, server, size):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    for name, (formula, verdict) in FORMULAS.items():
        kit.open_page(page, server, "derive?" + urlencode({"formula": formula, "quantity": "dx"}))
        assert not kit.problems(page)
        main = kit.main(page)
        kit.screenshot(page, f"derive_{name}_{size[0]}x{size[1]}")
        if verdict is None:
            assert not main.locator(".katex").count()
            shown = kit.errors(main)
            assert shown and "does not match the (" in shown[0], shown
            top = main.locator('[data-testid="stAlertContainer"]').first
        else:
            assert main.locator(".katex").count() >= 1  # the formula as read, typeset
            assert kit.heading(page, "h2", f"^{verdict}$") == verdict
            top = main.get_by_text("How the lab reads your formula")
        top.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        kit.screenshot(page, f"derive_{name}_{size[0]}x{size[1]}_result")
